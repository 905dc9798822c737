"""In the pull request: `mm2gov schema`, `validate`, `plan` and `size`."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import click

from governance.cli.root import (
    cli,
    fail_on_option,
    format_option,
    opa_url_option,
    repo_argument,
)
from governance.errors import EXIT_VIOLATIONS

log = logging.getLogger("mm2gov")


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the governance repo files (clusters.yaml, tenants/*.yaml)."""
    from governance.config.schema import repo_json_schema

    click.echo(json.dumps(repo_json_schema(), indent=2))


@cli.command()
@repo_argument
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown", "sarif", "junit"]),
              default="text", show_default=True)
@fail_on_option
@opa_url_option
def validate(repo: Path, output_format: str, fail_on: str, opa_url: str | None) -> None:
    """Check REPO: schema, then the Rego rules (built-in + REPO/policies/*.rego) in a real OPA."""
    from governance.policy.decide import decide_repo
    from governance.render import violations as render

    inventory, decision = decide_repo(repo, opa_url)
    click.echo(render.report(output_format, list(decision.violations), repo=str(repo), tenants=inventory.tenants,
                             fail_on=fail_on, scopes=decision.scopes), nl=False)
    if output_format == "text":
        log.info("checked %d tenant(s), %d cluster(s), %d flow(s)", len(inventory.tenants),
                 len(inventory.clusters), sum(len(t.flows) for t in inventory.tenants.values()))
    if decision.at_or_above(fail_on):
        sys.exit(EXIT_VIOLATIONS)


@cli.command()
@repo_argument
@click.option("--base", required=True, metavar="DIR|GIT_REF",
              help="What REPO is compared with: a directory, or a git ref of the repository REPO is in.")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown", "sarif", "junit"]),
              default="text", show_default=True)
@fail_on_option
@opa_url_option
@click.option("--live", is_flag=True,
              help="Read the source clusters' topics (admin credentials from --secrets-dir) to show which existing "
                   "topics each changed flow starts or stops replicating.")
@click.option("--secrets-dir", envvar="MM2GOV_SECRETS_DIR", default="/etc/mm2gov/secrets", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Secret store for --live.")
def plan(repo: Path, base: str, output_format: str, fail_on: str, opa_url: str | None, live: bool,
         secrets_dir: Path) -> None:
    """Show what a change to REPO does: tenants, flows, principals, the effective-permission
    diff ("User:x gains READ on cloud topic prefix onprem.payments.public.") and, per flow, the topic
    patterns added and removed (with --live, the existing source topics they start or stop)."""
    from governance.compile.acls import desired_bindings
    from governance.config import load_inventory
    from governance.config.loader import ReadCache, empty_inventory
    from governance.plan.base import materialize_git_base, temporary_dir
    from governance.plan.diff import make_plan
    from governance.policy.decide import PolicySession
    from governance.policy.engine import at_or_above
    from governance.render import plan as render_plan

    with temporary_dir() as tmp, PolicySession(opa_url) as session:  # OPA starts while the head loads
        read = ReadCache()  # the base parses only the tenant files the change touched
        head = load_inventory(repo, read)
        head_decision = session.submit(head)  # OPA evaluates head while the base loads
        if Path(base).is_dir():
            base_inventory, base_label = load_inventory(Path(base), read), base
        else:
            base_dir = materialize_git_base(repo, base, Path(tmp))
            base_inventory = load_inventory(base_dir, read) if base_dir else empty_inventory(repo)
            base_label = f"{base} (git)" if base_dir else f"{base} (git; {repo} did not exist there)"
        base_decision = session.submit(base_inventory)
        head_result = head_decision.result()  # submitted first, so decided first, as a rule
        head_bindings = desired_bindings(head_result.tenancy)  # while OPA still evaluates the base
        base_result = base_decision.result()
        topics = _source_topics(base_result, head_result, {**base_inventory.clusters, **head.clusters},
                                secrets_dir) if live else None
        the_plan = make_plan(base_result, head_result, topics, head_bindings)
    click.echo(render_plan.report(output_format, the_plan, base_label, repo=str(repo), tenants=head.tenants),
               nl=False)
    if at_or_above(the_plan.violations, fail_on):
        sys.exit(EXIT_VIOLATIONS)


@cli.command()
@repo_argument
@format_option
@fail_on_option
@opa_url_option
def size(repo: Path, output_format: str, fail_on: str, opa_url: str | None) -> None:
    """Show each flow's capacity: what it asks (capacity in its tenant file), what mm2gov derived from
    capacity.yaml's calibration (MM2 tasks and nodes, CPU, memory, heap, client quotas), and per cluster
    the replication budget, the flows into and out of it and the headroom left (docs/capacity.md).
    Exits 1 when the repo has violations at --fail-on or above (the capacity ones are listed)."""
    from governance.plan.size import size_report
    from governance.policy.decide import decide_repo
    from governance.render import size as render_size
    from governance.render import violations as render_violations

    inventory, decision = decide_repo(repo, opa_url)
    report = size_report(decision.tenancy, inventory.capacity)
    capacity = [v for v in render_violations.ordered(decision.violations) if v.rule.startswith("capacity_")]
    render = render_size.json_report if output_format == "json" else render_size.text_report
    click.echo(render(report, capacity), nl=False)
    if blocking := decision.at_or_above(fail_on):
        click.echo(render_violations.text(list(blocking)), err=True, nl=False)
        sys.exit(EXIT_VIOLATIONS)


def _source_topics(base, head, clusters, secrets_dir: Path) -> dict[str, frozenset[str]]:
    """The topic names on the source of every flow whose patterns change, read with the admin credentials."""
    from governance.kafka.apply import client_config, cluster_metadata
    from governance.plan.topics import flow_topic_changes
    from governance.secrets.store import DirSecretStore

    store = DirSecretStore(secrets_dir)
    sources = sorted({c.source for c in flow_topic_changes(base.tenancy, head.tenancy)})
    return {alias: frozenset(cluster_metadata(alias, client_config(alias, clusters[alias], store)).topics)
            for alias in sources}
