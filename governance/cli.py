"""The `mm2gov` command line. Thin: parse, call the library, print what `governance.render` makes of
the result, map errors to exit codes."""

from __future__ import annotations

import gc
import json
import logging
import sys
from pathlib import Path

import click

from governance import __version__
from governance.errors import EXIT_RUNTIME, EXIT_USAGE, EXIT_VIOLATIONS, MM2GovError

log = logging.getLogger("mm2gov")
LOG_LEVELS = ("debug", "info", "warning", "error")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="mm2gov")
@click.option("--log-level", type=click.Choice(LOG_LEVELS), default="info", show_default=True,
              help="Verbosity of the log on stderr (stdout carries only results).")
def cli(log_level: str) -> None:
    """mm2gov keeps lines of business (tenants) apart when Kafka data is replicated
    between clusters with MirrorMaker 2.

    One tenancy model in Git (clusters.yaml, tenants/*.yaml, Rego policies) is
    checked by OPA and compiled into isolated MM2 flows, least-privilege ACLs,
    users, Strimzi resources and secrets; the same policies run in the pull
    request, at admission and in the audit.

    Exit codes: 0 ok, 1 violations or findings, 2 bad usage or invalid config,
    3 runtime failure (cluster, OPA or a tool unreachable or missing).
    """
    from governance.secrets.scrub import ScrubFilter

    logging.basicConfig(level=log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for handler in logging.getLogger().handlers:  # every record is scrubbed of known secret values
        handler.addFilter(ScrubFilter())
    if log_level != "debug":  # connection retries are reported once, by the command's own error
        logging.getLogger("urllib3").setLevel(logging.ERROR)


# -- devstack --------------------------------------------------------------------------------

DEFAULT_RUN_DIR = "~/.cache/mm2gov/run/default"
run_dir_option = click.option(
    "--run-dir", default=DEFAULT_RUN_DIR, show_default=True,
    help="Where the stack keeps its state, logs, certificates and data.",
    callback=lambda _ctx, _param, value: Path(value).expanduser(),
)
format_option = click.option("--format", "output_format", type=click.Choice(["text", "json"]),
                             default="text", show_default=True, help="Output format on stdout.")


@cli.group()
def devstack() -> None:
    """The real local stack on 127.0.0.1: two Kafka 4 clusters (KRaft, SASL_SSL,
    SCRAM-SHA-512, StandardAuthorizer), OPA, etcd + kube-apiserver with Strimzi's
    CRDs, and MirrorMaker 2 per flow when asked. Components come from `make setup`."""


@devstack.command("up")
@run_dir_option
@click.option("--only", default="kafka,opa,kube", show_default=True,
              help="Comma-separated components to start (kafka, opa, kube).")
@click.option("--mm2", "mm2_files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Start a dedicated MirrorMaker 2 for this properties file (repeatable; flow id = file name).")
@click.option("--port", "ports", multiple=True, metavar="COMPONENT=PORT",
              help="Fix a port, e.g. kafka-source=19093 (repeatable). Others are chosen free.")
@format_option
def devstack_up(run_dir: Path, only: str, mm2_files: tuple[Path, ...], ports: tuple[str, ...],
                output_format: str) -> None:
    """Start the stack and wait until every component is really ready."""
    from governance.devstack.stack import Stack, StackSpec

    spec = StackSpec(run_dir=run_dir, components=tuple(c.strip() for c in only.split(",") if c.strip()),
                     ports=_parse_ports(ports))
    log.info("starting %s in %s", ", ".join(spec.components), run_dir)
    stack = Stack(spec).up()
    try:
        for path in mm2_files:
            log.info("starting MirrorMaker 2 for %s", path)
            stack.start_mirrormaker(path.stem, path)
    except BaseException:
        stack.down()
        raise
    _echo_stack(stack.describe(), stack.health(), output_format)


def _parse_ports(values: tuple[str, ...]) -> dict[str, int]:
    ports = {}
    for value in values:
        name, _, number = value.partition("=")
        if not number.isdigit() or not 0 < int(number) < 65536:
            raise click.BadParameter(f"expected COMPONENT=PORT, got {value!r}", param_hint="--port")
        ports[name.strip()] = int(number)
    return ports


@devstack.command("down")
@run_dir_option
def devstack_down(run_dir: Path) -> None:
    """Stop every process of the stack (by PID) and keep its logs."""
    from governance.devstack.stack import Stack

    stopped = Stack.attach(run_dir).down()
    click.echo(f"stopped: {', '.join(stopped) if stopped else 'nothing was running'}")


@devstack.command("status")
@run_dir_option
@format_option
def devstack_status(run_dir: Path, output_format: str) -> None:
    """Show what runs where and probe each component. Exit 3 if one is not ready."""
    from governance.devstack.stack import Stack

    stack = Stack.attach(run_dir)
    health = stack.health()
    _echo_stack(stack.describe(), health, output_format)
    if any(state != "ready" for state in health.values()):
        sys.exit(EXIT_RUNTIME)


def _echo_stack(description: dict, health: dict[str, str], output_format: str) -> None:
    from governance.render import stack as render_stack

    render = render_stack.as_json if output_format == "json" else render_stack.text
    click.echo(render(description, health), nl=False)


# -- policy: schema, validate, plan -----------------------------------------------------------

SEVERITY_CHOICE = click.Choice(["info", "low", "medium", "high", "critical"])
opa_url_option = click.option("--opa-url", default=None, metavar="URL",
                              help="Use this OPA server instead of starting one (policies are uploaded to it).")
fail_on_option = click.option("--fail-on", default="high", show_default=True, type=SEVERITY_CHOICE,
                              help="Exit 1 when a violation has this severity or higher.")
repo_argument = click.argument("repo", type=click.Path(path_type=Path))


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
    from governance.config import load_inventory
    from governance.policy.decide import decide
    from governance.render import violations as render

    inventory = load_inventory(repo)
    decision = decide(inventory, opa_url)
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
    from governance.config import load_inventory
    from governance.config.loader import empty_inventory
    from governance.plan.base import materialize_git_base, temporary_dir
    from governance.plan.diff import make_plan
    from governance.policy.decide import PolicySession
    from governance.policy.engine import at_or_above
    from governance.render import plan as render_plan

    head = load_inventory(repo)
    with temporary_dir() as tmp, PolicySession(opa_url) as session:
        head_decision = session.submit(head)  # OPA evaluates head while the base loads
        if Path(base).is_dir():
            base_inventory, base_label = load_inventory(Path(base)), base
        else:
            base_dir = materialize_git_base(repo, base, Path(tmp))
            base_inventory = load_inventory(base_dir) if base_dir else empty_inventory(repo)
            base_label = f"{base} (git)" if base_dir else f"{base} (git; {repo} did not exist there)"
        base_decision = session.submit(base_inventory)
        base_result, head_result = base_decision.result(), head_decision.result()
        topics = _source_topics(base_result, head_result, {**base_inventory.clusters, **head.clusters},
                                secrets_dir) if live else None
        the_plan = make_plan(base_result, head_result, topics)
    click.echo(render_plan.report(output_format, the_plan, base_label, repo=str(repo), tenants=head.tenants),
               nl=False)
    if at_or_above(the_plan.violations, fail_on):
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


# -- generate, apply, drift -------------------------------------------------------------------

secrets_path_option = click.option(
    "--secrets-path", default="/etc/mm2gov/secrets", show_default=True,
    help="Where MM2 finds mounted secrets at run time (<path>/<secret>/<key>); generated files reference it.")


secrets_dir_option = click.option(
    "--secrets-dir", envvar="MM2GOV_SECRETS_DIR", default="/etc/mm2gov/secrets", show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Secret store as mounted Secrets: <dir>/<secret>/<key> (admin credentials, CAs, SCRAM passwords).")


def _decided(repo: Path, opa_url: str | None):
    """Load and decide: the inventory and the policy decision every command acts on. A repo with high or
    critical violations gets one answer from every command that acts on it (generate, apply, drift, audit,
    failover, probe): the violations and exit 1, nothing done."""
    from governance.config import load_inventory
    from governance.policy.decide import decide
    from governance.render import violations as render

    inventory = load_inventory(repo)
    decision = decide(inventory, opa_url)
    blocking = decision.at_or_above("high")
    if blocking:
        click.echo(render.text(blocking), err=True, nl=False)
        click.echo("error: refusing to act on a repo with high or critical violations", err=True)
        sys.exit(EXIT_VIOLATIONS)
    return inventory, decision


def _desired_state(repo: Path, opa_url: str | None, secrets_path: str):
    """Load, decide and compile; a repo with high or critical violations is refused (exit 1)."""
    from governance.compile.desired import compile_desired

    inventory, decision = _decided(repo, opa_url)
    return inventory, compile_desired(inventory, decision, secrets_path)


@cli.command()
@repo_argument
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
@secrets_path_option
@opa_url_option
def generate(repo: Path, out: Path, secrets_path: str, opa_url: str | None) -> None:
    """Write what enforces REPO: OUT/mm2/<flow>.properties (one MirrorMaker 2 per tenant flow),
    OUT/acls/<cluster>.json, OUT/strimzi/*.yaml. Refuses a repo with violations (exit 1)."""
    from governance.compile.write import write_outputs
    from governance.secrets.placement import placement

    inventory, state = _desired_state(repo, opa_url, secrets_path)
    written = write_outputs(state, out, placement(state, inventory.clusters).tenant_secrets(state))
    click.echo(f"wrote {len(written)} files to {out}")


@cli.command()
@repo_argument
@click.option("--dry-run", is_flag=True, help="Show the changes, make none.")
@click.option("--batch-size", default=1000, show_default=True, type=click.IntRange(1, 10000),
              help="ACL bindings per CreateAcls/DeleteAcls request.")
@click.option("--kubeconfig", envvar="KUBECONFIG", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Also apply the Strimzi objects (clusters with a strimzi section) to this Kubernetes cluster.")
@secrets_dir_option
@secrets_path_option
@format_option
@opa_url_option
def apply(repo: Path, dry_run: bool, batch_size: int, kubeconfig: Path | None, secrets_dir: Path,
          secrets_path: str, output_format: str, opa_url: str | None) -> None:
    """Bring the live clusters to REPO's desired state: ACLs and SCRAM users of the principals
    mm2gov owns (recorded in each cluster's mm2gov.ownership topic), and with --kubeconfig the
    Strimzi objects mm2gov owns (label app.kubernetes.io/managed-by=mm2gov). Neighbours' ACLs
    and objects are left alone. Idempotent; removals run before additions."""
    from governance.kafka.apply import apply_state
    from governance.secrets.store import DirSecretStore

    inventory, state = _desired_state(repo, opa_url, secrets_path)
    results = apply_state(state, inventory.clusters, DirSecretStore(secrets_dir), dry_run=dry_run,
                          batch_size=batch_size)
    kube = None
    if state.strimzi and kubeconfig is not None:
        from governance.k8s.strimzi_apply import api_client, apply_objects

        kube = apply_objects(api_client(kubeconfig), state.strimzi, dry_run=dry_run)
    elif state.strimzi:
        log.warning("%d Strimzi objects not applied: no --kubeconfig (write them with `mm2gov generate`)",
                    len(state.strimzi))
    from governance.render import changes as render_changes

    click.echo(render_changes.as_json(results, kube) if output_format == "json" else
               render_changes.text(results, "planned (dry run)" if dry_run else "applied", kube), nl=False)


@cli.command()
@repo_argument
@secrets_dir_option
@format_option
@opa_url_option
@click.option("--warn-days", default=30, show_default=True, type=click.IntRange(0, 3650),
              help="Report certificates that expire within this many days.")
def drift(repo: Path, secrets_dir: Path, output_format: str, opa_url: str | None, warn_days: int) -> None:
    """Compare the live clusters with REPO (owned principals only), list neighbours' ACLs, and
    report CA and client certificates that are missing, expired or expire within --warn-days.
    Exit 1 when what mm2gov owns differs from the desired state or a certificate needs attention."""
    from governance.kafka.apply import apply_state
    from governance.render import changes as render_changes
    from governance.secrets.expiry import certificate_expiry
    from governance.secrets.store import DirSecretStore

    inventory, state = _desired_state(repo, opa_url, "/etc/mm2gov/secrets")
    store = DirSecretStore(secrets_dir)
    results = apply_state(state, inventory.clusters, store, dry_run=True)
    certificates = certificate_expiry(state, inventory.clusters, store, warn_days=warn_days)
    render = render_changes.drift_json if output_format == "json" else render_changes.drift_text
    click.echo(render(results, certificates), nl=False)
    if any(c.count for c in results) or any(c.needs_attention for c in certificates):
        sys.exit(EXIT_VIOLATIONS)


@cli.group()
def secrets() -> None:
    """Secret material for a repo: CAs, client certificates and SCRAM credentials, kept in a
    secret store (Kubernetes Secrets or a directory); values are never printed."""


secrets_target_option = click.option(
    "--to", "target", required=True, metavar="k8s|dir:PATH",
    help="The secret store: k8s (Kubernetes Secrets in each reader's namespace, via --kubeconfig) or "
         "dir:PATH (files <PATH>/<secret>/<key>, mode 0600, the layout of mounted Secrets).")
kubeconfig_option = click.option(
    "--kubeconfig", envvar="KUBECONFIG", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Kubernetes cluster for --to k8s (and, for rotate, where dependants are rolled).")
system_namespace_option = click.option(
    "--system-namespace", default="mm2gov-system", show_default=True,
    help="Namespace for CA keys and admin credentials (--to k8s).")
key_algorithm_option = click.option(
    "--key-algorithm", type=click.Choice(["ec", "rsa2048", "rsa3072", "rsa4096"]), default="ec",
    show_default=True, help="Key type of new CAs and client certificates (EC P-256 or RSA).")


def _secret_store(target: str, kubeconfig: Path | None, system_namespace: str, state, clusters):
    kind, _, path = target.partition(":")
    if kind == "dir" and path:
        from governance.secrets.store import DirSecretStore

        return DirSecretStore(Path(path)), path
    if target == "k8s":
        if kubeconfig is None:
            raise click.BadParameter("--to k8s needs --kubeconfig (or KUBECONFIG)", param_hint="--to")
        from governance.k8s.secret_store import KubeSecretStore
        from governance.k8s.strimzi_apply import api_client
        from governance.secrets.placement import placement

        where = placement(state, clusters, system_namespace)
        return KubeSecretStore(api_client(kubeconfig), where), "Kubernetes Secrets"
    raise click.BadParameter(f"expected k8s or dir:PATH, got {target!r}", param_hint="--to")


@secrets.command("issue")
@repo_argument
@secrets_target_option
@kubeconfig_option
@system_namespace_option
@key_algorithm_option
@format_option
@opa_url_option
def secrets_issue(repo: Path, target: str, kubeconfig: Path | None, system_namespace: str, key_algorithm: str,
                  output_format: str, opa_url: str | None) -> None:
    """Create every missing CA, SCRAM credential and client certificate REPO's desired state
    needs. Existing secrets are kept; the output names secrets, fingerprints and expiry, never values."""
    from governance.render import secrets as render_secrets
    from governance.secrets.issue import issue_missing

    inventory, state = _desired_state(repo, opa_url, "/etc/mm2gov/secrets")
    store, where = _secret_store(target, kubeconfig, system_namespace, state, inventory.clusters)
    issued = issue_missing(state, inventory.clusters, store, key_algorithm)
    click.echo(render_secrets.issued_json(issued) if output_format == "json" else
               render_secrets.issued_text(issued, where), nl=False)


@secrets.command("rotate")
@repo_argument
@secrets_target_option
@click.option("--tenant", help="Rotate only this tenant's principals (its MM2 flows included).")
@click.option("--admin-secrets-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where the clusters' admin credentials and CAs are, when not in the --to store.")
@kubeconfig_option
@system_namespace_option
@key_algorithm_option
@format_option
@opa_url_option
def secrets_rotate(repo: Path, target: str, tenant: str | None, admin_secrets_dir: Path | None,
                   kubeconfig: Path | None, system_namespace: str, key_algorithm: str, output_format: str,
                   opa_url: str | None) -> None:
    """Rotate SCRAM passwords and client certificates: the new ones are stored and registered on
    the brokers, dependants (KafkaMirrorMaker2, Deployments labelled mm2gov.io/flow) are rolled
    with --kubeconfig, and the old ones stop working. Flows to restart are listed."""
    from governance.kafka.apply import client_config
    from governance.render import secrets as render_secrets
    from governance.secrets.rotate import roll_dependants, rotate
    from governance.secrets.store import DirSecretStore

    inventory, state = _desired_state(repo, opa_url, "/etc/mm2gov/secrets")
    store, where = _secret_store(target, kubeconfig, system_namespace, state, inventory.clusters)
    admin_store = DirSecretStore(admin_secrets_dir) if admin_secrets_dir else store
    configs = {alias: client_config(alias, cluster, admin_store) for alias, cluster in inventory.clusters.items()}
    result = rotate(state, inventory.clusters, store, configs, tenant, key_algorithm)
    if kubeconfig is not None and result.flows:
        from governance.k8s.strimzi_apply import api_client

        rotated_at = max(r.issued_at for r in result.rotated)
        result.rolled = roll_dependants(api_client(kubeconfig), state, inventory.clusters, result.flows, rotated_at)
    click.echo(render_secrets.rotation_json(result) if output_format == "json" else
               render_secrets.rotation_text(result, where), nl=False)


@cli.group()
def admission() -> None:
    """The admission check at deployment: a ValidatingAdmissionWebhook that evaluates the
    same Rego bundle on KafkaMirrorMaker2, KafkaUser, KafkaTopic and mm2gov Secrets."""


@admission.command("serve")
@repo_argument
@click.option("--tls-cert", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="PEM certificate (chain) the API server verifies (caBundle of the webhook configuration).")
@click.option("--tls-key", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="PEM private key of --tls-cert.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0 in a pod).")
@click.option("--port", default=8443, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port.")
@click.option("--kubeconfig", envvar="KUBECONFIG", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Watch Namespaces (their mm2gov.io/tenant label decides every review's tenant) in this "
                   "cluster. One of --kubeconfig or --in-cluster is required.")
@click.option("--in-cluster", is_flag=True, help="Watch Namespaces with the pod's service account.")
@click.option("--reload-interval", default=2.0, show_default=True, type=click.FloatRange(0.2, 3600),
              help="Seconds between checks of REPO on disk; a change is pushed to OPA.")
@opa_url_option
def admission_serve(repo: Path, tls_cert: Path, tls_key: Path, host: str, port: int, kubeconfig: Path | None,
                    in_cluster: bool, reload_interval: float, opa_url: str | None) -> None:
    """Serve POST /validate (AdmissionReview v1), GET /healthz, /readyz and /metrics over HTTPS.
    Decisions come from OPA (started here unless --opa-url); any failure denies (fail closed)."""
    import signal
    import threading
    from contextlib import ExitStack

    from governance.admission.namespaces import NamespaceWatch
    from governance.admission.server import serve
    from governance.config import load_inventory
    from governance.policy.bundle import builtin_modules
    from governance.policy.opa import OpaEngine

    if kubeconfig is None and not in_cluster:  # without namespaces every review would be denied
        raise click.UsageError("admission serve needs the API server's Namespaces (the tenant of a review is "
                               "its namespace's mm2gov.io/tenant label): give --kubeconfig or --in-cluster")
    load_inventory(repo)  # an invalid repo at start is exit 2, before anything listens
    labels = None
    if kubeconfig is not None or in_cluster:
        from kubernetes import client, config

        if in_cluster:
            config.load_incluster_config()
            labels = NamespaceWatch(client.ApiClient())
        else:
            from governance.k8s.strimzi_apply import api_client

            labels = NamespaceWatch(api_client(kubeconfig))
    with ExitStack() as stack:
        engine = stack.enter_context(OpaEngine(builtin_modules(), opa_url))

        def on_ready(server) -> None:
            def stop(*_: object) -> None:
                threading.Thread(target=server.shutdown, daemon=True).start()

            signal.signal(signal.SIGTERM, stop)
            signal.signal(signal.SIGINT, stop)
            click.echo(f"serving https://{host}:{server.server_address[1]}/validate", err=True)

        try:
            serve(repo, engine.url, tls_cert, tls_key, host, port, labels, reload_interval, on_ready,
                  engine.upload_builtin if opa_url else None)
        except OSError as exc:
            raise MM2GovError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


@cli.command()
@repo_argument
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Where reports go (audit.json, audit.sarif, report.html) and OUT/history/ (Parquet) is kept.")
@click.option("--format", "formats", default="json,html,sarif", show_default=True,
              help="Comma-separated: json, html, sarif.")
@click.option("--fail-on", type=click.Choice(["info", "low", "medium", "high", "critical"]), default="high",
              show_default=True, help="Exit 1 when a finding is at or above this severity.")
@click.option("--spark-master", default="local[2]", show_default=True,
              help="Spark master URL (local[N], spark://host:port, ...).")
@click.option("--records-per-partition", default=1000, show_default=True, type=click.IntRange(0, 10_000_000),
              help="How many of the newest records of each partition the scan reads (0: metadata only).")
@click.option("--check", "checks", multiple=True, help="Run only these checks (repeatable); default: all.")
@secrets_dir_option
@opa_url_option
def audit(repo: Path, out: Path, formats: str, fail_on: str, spark_master: str, records_per_partition: int,
          checks: tuple[str, ...], secrets_dir: Path, opa_url: str | None) -> None:
    """Scan the live clusters for cross-tenant leakage: ACLs, topics, groups and the replicated
    records, against REPO's policy decision (the tenancy generate compiles). Writes the reports and
    adds the run to OUT/history. Exit 1 on findings at or above --fail-on, or when REPO has high or
    critical violations (nothing is scanned), 3 when a cluster or table could not be collected (the
    report then says PARTIAL and is never clean)."""
    from governance.secrets.store import DirSecretStore
    from spark_audit import require_pyspark
    from spark_audit.catalog import SEVERITIES

    require_pyspark()  # an install without the `audit` extra: exit 3 with the pip line
    from spark_audit.job import AuditOptions, run_audit

    wanted = frozenset(f.strip() for f in formats.split(",") if f.strip())
    if not wanted or wanted - {"json", "html", "sarif"}:
        raise click.BadParameter(f"expected a comma-separated list of json, html, sarif; got {formats!r}",
                                 param_hint="--format")
    options = AuditOptions(out=out, formats=wanted, master=spark_master, records_per_partition=records_per_partition,
                           checks=checks or None)
    inventory, decision = _decided(repo, opa_url)
    run = run_audit(inventory, decision.tenancy, DirSecretStore(secrets_dir), options,
                    progress=lambda line: click.echo(line, err=True))
    counts = {sev: sum(1 for f in run.findings if f["severity"] == sev) for sev in SEVERITIES}
    click.echo(f"audit {run.run_id}: {len(run.findings)} findings ("
               + ", ".join(f"{counts[sev]} {sev}" for sev in reversed(SEVERITIES)) + f"), "
               f"{run.records_scanned} records scanned in {run.seconds:.0f} s")
    if "html" in wanted:
        click.echo(f"report: {out / 'report.html'}")
    if run.partial:
        for problem in run.problems:
            click.echo(f"error: {problem}", err=True)
        click.echo("error: the snapshot is PARTIAL: the report is not a clean bill of health", err=True)
        sys.exit(EXIT_RUNTIME)
    threshold = SEVERITIES.index(fail_on)
    if any(SEVERITIES.index(f["severity"]) >= threshold for f in run.findings if f["severity"] in SEVERITIES):
        sys.exit(EXIT_VIOLATIONS)


@cli.command()
@click.argument("tenant")
@click.option("--from", "source", required=True, metavar="CLUSTER", help="The cluster the consumers run on now.")
@click.option("--to", "target", required=True, metavar="CLUSTER", help="The cluster they would switch to.")
@click.option("--group", "groups", multiple=True, help="Check only this consumer group (repeatable).")
@click.option("--repo", default=".", show_default=True, type=click.Path(path_type=Path),
              help="The governance repo.")
@secrets_dir_option
@click.option("--max-loss", default=0, show_default=True, type=click.IntRange(0),
              help="Records per partition a switch may lose (not replicated, or skipped by the resume offset).")
@click.option("--max-reread", default=1000, show_default=True, type=click.IntRange(0),
              help="Records per partition a switch may re-read.")
@click.option("--max-checkpoint-age", default=300.0, show_default=True, type=click.FloatRange(0),
              help="Seconds a checkpoint behind the group on the source may be old.")
@format_option
@opa_url_option
def failover(tenant: str, source: str, target: str, groups: tuple[str, ...], repo: Path, secrets_dir: Path,
             max_loss: int, max_reread: int, max_checkpoint_age: float, output_format: str,
             opa_url: str | None) -> None:
    """Before switching TENANT's consumers from --from to --to: per consumer group and partition of the
    flow, what a switch now would lose and re-read, from the flow's checkpoints and offset syncs.
    The flow is the one the policy decided (as generate compiles it): a repo with high or critical
    violations is refused first. Exit 0 when every partition is within the limits, 1 when not (the
    report says which and why) or when the repo is refused. Runbook: docs/failover.md."""
    import time

    from governance.failover.assess import Thresholds, assess, verdict
    from governance.failover.live import find_flow, gather
    from governance.kafka.apply import client_config
    from governance.render import failover as render
    from governance.secrets.store import DirSecretStore

    inventory, decision = _decided(repo, opa_url)
    owner, flow = find_flow(decision.tenancy, tenant, source, target)
    store = DirSecretStore(secrets_dir)
    facts = gather(owner, flow, client_config(source, inventory.clusters[source], store),
                   client_config(target, inventory.clusters[target], store), groups)
    limits = Thresholds(max_loss, max_reread, max_checkpoint_age)
    now_ms = int(time.time() * 1000)
    reports = [assess(f, now_ms, limits) for f in facts]
    result = verdict(reports)
    click.echo((render.as_json if output_format == "json" else render.text)(tenant, flow, reports, result, limits),
               nl=False)
    if not result.ok:
        sys.exit(EXIT_VIOLATIONS)


@cli.command()
@click.argument("tenant")
@click.option("--flow", "pair", metavar="SOURCE->TARGET", help="Probe only this flow (default: every flow of "
                                                                  "TENANT with an slo).")
@click.option("--repo", default=".", show_default=True, type=click.Path(path_type=Path),
              help="The governance repo.")
@secrets_dir_option
@click.option("--per-partition", default=10, show_default=True, type=click.IntRange(1, 10000),
              help="Canaries written to each partition of the probe topic.")
@click.option("--wait", default=60.0, show_default=True, type=click.FloatRange(0.5, 3600),
              help="Seconds to wait for the canaries on the target; one still missing then is lost.")
@format_option
@click.option("--serve", is_flag=True, help="Probe every --interval seconds and serve the figures as Prometheus "
                                            "metrics on --host:--port /metrics, until stopped (SIGTERM).")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --serve: the address to listen on.")
@click.option("--port", default=9465, show_default=True, type=click.IntRange(0, 65535),
              help="With --serve: the port of /metrics.")
@click.option("--interval", default=60.0, show_default=True, type=click.FloatRange(1),
              help="With --serve: seconds from one round of runs to the next.")
@opa_url_option
def probe(tenant: str, pair: str | None, repo: Path, secrets_dir: Path, per_partition: int, wait: float,
          output_format: str, serve: bool, host: str, port: int, interval: float, opa_url: str | None) -> None:
    """Measure TENANT's replication SLOs end to end: per flow with an `slo`, canaries written to every
    partition of the tenant's probe topic on the source, read back on the target as the tenant's probe
    user. The flows are the ones the policy decided: a repo with high or critical violations is refused
    first. Exit 0 when every flow meets its SLO, 1 when one misses it or the repo is refused, 3 when a
    cluster cannot be reached. docs/probe.md."""
    from governance.probe.assess import assess, misses
    from governance.probe.live import probe_configs, probe_flows, probe_once
    from governance.render import probe as render
    from governance.secrets.store import DirSecretStore

    if pair is not None and (len(pair.split("->")) != 2 or not all(pair.split("->"))):
        raise click.BadParameter(f"{pair!r} is not SOURCE->TARGET", param_hint="--flow")
    inventory, decision = _decided(repo, opa_url)
    flows = probe_flows(decision.tenancy, tenant, tuple(pair.split("->")) if pair else None)  # type: ignore[arg-type]
    store = DirSecretStore(secrets_dir)
    if serve:
        _probe_serve(inventory, flows, store, per_partition, min(wait, interval), host, port, interval)
        return
    outcomes = []
    for flow in flows:
        run = probe_once(flow, *probe_configs(inventory.clusters, flow, store), per_partition, wait)
        result = assess(run.run, run.sent, run.received)
        outcomes.append(render.FlowOutcome(flow, result, misses(result, flow.slo)))
    click.echo((render.as_json if output_format == "json" else render.text)(tenant, outcomes), nl=False)
    if any(o.misses for o in outcomes):
        sys.exit(EXIT_VIOLATIONS)


def _probe_serve(inventory, flows, store, per_partition: int, wait: float, host: str, port: int,
                 interval: float) -> None:
    """`probe --serve`: each flow probed every interval (credentials read again each run, so rotated
    Secrets are used), the figures as metrics (governance/probe/serve.py) until SIGTERM or SIGINT."""
    import signal
    import threading
    import time

    from governance.probe import serve as probe_serve
    from governance.probe.assess import assess, misses
    from governance.probe.live import probe_configs, probe_once

    def once(flow):
        def run(metrics: probe_serve.ProbeMetrics) -> None:
            done = probe_once(flow, *probe_configs(inventory.clusters, flow, store), per_partition, wait)
            result = assess(done.run, done.sent, done.received)
            missed = misses(result, flow.slo)
            metrics.record(flow.tenant, flow.flow, flow.slo.latency_p99_ms, result, missed, time.time())
            log.info("probe of %s: %s", flow.flow, "; ".join(missed) or "SLO met")
        return probe_serve.guarded(flow.tenant, flow.flow, run)

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        probe_serve.serve(probe_serve.ProbeMetrics(), [once(f) for f in flows], host, port, interval, stop)
    except OSError as exc:
        raise MM2GovError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


@cli.command()
@click.option("--legacy", "legacy_file", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The properties file the legacy dedicated MirrorMaker 2 ran with (only its aliases, bootstrap "
                   "servers, offsets topic, policy and patterns are read; no value of it is printed).")
@click.option("--pair", required=True, metavar="SOURCE->TARGET", help="The replication the flows take over.")
@click.option("--repo", default=".", show_default=True, type=click.Path(path_type=Path),
              help="The governance repo with the new flows.")
@secrets_dir_option
@click.option("--dry-run/--apply", "dry_run", default=True, show_default=True,
              help="Show where each flow would resume (default), or write the seeds.")
@click.option("--force", is_flag=True,
              help="Overwrite positions in a flow's offsets topic that already holds records (its MM2 stopped).")
@click.option("--accept-retention-loss", is_flag=True,
              help="Seed partitions whose next records the source already deleted at its log start, not refuse them.")
@format_option
@opa_url_option
def migrate(legacy_file: Path, pair: str, repo: Path, secrets_dir: Path, dry_run: bool, force: bool,
            accept_retention_loss: bool, output_format: str, opa_url: str | None) -> None:
    """Cut over from a legacy shared MirrorMaker 2 to the repo's per-tenant flows without loss or
    duplicates: each flow's own offsets topic is seeded with the legacy MM2's source positions of
    its tenant's topics, so it resumes where the legacy stopped. Stop the legacy MM2 first and
    start the flows after --apply. Exit 0 when the cut-over stands (or was applied), 1 when refused
    (nothing is written); a repo with high or critical violations is refused (exit 1), as by apply.
    Runbook: docs/migration.md."""
    from governance.importer import read_properties_file
    from governance.kafka.apply import client_config
    from governance.migrate.live import gather, judge, new_flows, read_legacy, write
    from governance.render import migrate as render
    from governance.secrets.store import DirSecretStore

    legacy = read_legacy(read_properties_file(legacy_file), pair, str(legacy_file))
    inventory, decision = _decided(repo, opa_url)  # flows generate would refuse are not seeded either
    flows = new_flows(inventory, decision.tenancy, legacy)
    store = DirSecretStore(secrets_dir)
    target = client_config(legacy.target, inventory.clusters[legacy.target], store)
    facts = gather(legacy, flows, client_config(legacy.source, inventory.clusters[legacy.source], store), target)
    migration = judge(legacy, flows, facts, force, accept_retention_loss)
    applied = write(migration, target) if migration.plan.ok and not dry_run else None
    click.echo((render.as_json if output_format == "json" else render.text)(migration, applied), nl=False)
    if not migration.plan.ok:
        sys.exit(EXIT_VIOLATIONS)


@cli.command("import")
@click.argument("legacy", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--tenant", default="imported", show_default=True, help="Name of the tenant the flows belong to.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write the repo here (clusters.yaml, tenants/<tenant>.yaml) instead of printing it.")
def import_legacy(legacy: Path, tenant: str, out: Path | None) -> None:
    """Print the governance repo an existing MM2 properties file corresponds to, with a warning
    per unsafe setting (inline secrets, blacklist names, ACL sync, .* patterns). Secrets are
    never echoed."""
    from governance.importer import import_properties, read_properties_file
    from governance.render import importer as render_import

    try:
        imported = import_properties(read_properties_file(legacy), tenant)
    except ValueError as exc:
        raise click.UsageError(f"{legacy}: {exc}") from None
    for warning in imported.warnings:
        click.echo(f"warning: {warning}", err=True)
    files = render_import.repo_files(imported, tenant)
    if out is None:
        click.echo(render_import.text(files), nl=False)
        return
    (out / "tenants").mkdir(parents=True, exist_ok=True)
    for relative, content in files.items():
        (out / relative).write_text(content)
    click.echo(f"wrote {' and '.join(str(out / relative) for relative in files)}")


# -- doctor ----------------------------------------------------------------------------------


@cli.command()
@format_option
@click.option("--repo", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Also read every cluster of this repo's broker versions and judge them against the pinned MM2.")
@secrets_dir_option
def doctor(output_format: str, repo: Path | None, secrets_dir: Path) -> None:
    """List the external tools mm2gov runs (opa, Java, the Kafka client, pyspark, Spark's Kafka
    jars): where each was found and its version, or the one line that fixes it. With --repo, also
    each cluster's broker version and whether the pinned MM2 can serve it. Exit 0 when all
    are found, 3 otherwise. Overrides: MM2GOV_OPA, JAVA_HOME, MM2GOV_SPARK_KAFKA_JARS, MM2GOV_CACHE."""
    from governance.render import doctor as render_doctor
    from governance.tools import check_tools

    statuses = check_tools()
    verdicts = []
    if repo is not None:  # broker versions (issue 16): every cluster, judged in the roles its flows give it
        from governance.config import load_inventory
        from governance.kafka.version import cluster_report
        from governance.secrets.store import DirSecretStore

        inventory = load_inventory(repo)
        pairs = [(f.source, f.target) for tenant in inventory.tenants.values() for f in tenant.flows]
        verdicts = cluster_report(inventory.clusters, pairs, DirSecretStore(secrets_dir))
    if output_format == "json":
        tools_json = render_doctor.as_json(statuses)
        click.echo(tools_json if repo is None else json.dumps(
            {"tools": json.loads(tools_json), "clusters": [
                {"cluster": v.cluster, "role": v.role, "version": v.version, "ok": v.ok, "problems": list(v.problems)}
                for v in verdicts]}, indent=2))
    else:
        click.echo(render_doctor.text(statuses))
        click.echo("".join(f"{'ok  ' if v.ok else 'FAIL'} {v.line()}\n" for v in verdicts), nl=False)
    if not render_doctor.all_found(statuses) or not all(v.ok for v in verdicts):
        sys.exit(EXIT_RUNTIME)


# -- demo ------------------------------------------------------------------------------------


@cli.command()
@click.option("--run-dir", default=None, help="Keep the demo stack's files here (default: a temp dir).")
@click.option("--keep", is_flag=True, help="Leave the stack running at the end (stop it with devstack down).")
def demo(run_dir: str | None, keep: bool) -> None:
    """The whole story on a real local stack."""
    from governance.demo import run_demo

    run_demo(Path(run_dir).expanduser() if run_dir else None, keep=keep)


# -- entry point -----------------------------------------------------------------------------


def main() -> None:
    """Run the CLI; every known failure is one line on stderr and a contract exit code."""
    # A short-lived process that builds large, acyclic records (scopes, ACL sets): collecting
    # the young generation every 700 allocations cost a third of `plan` on 1,000 tenants.
    gc.set_threshold(50_000, 20, 20)
    from governance.secrets.scrub import scrub

    try:
        code = cli.main(prog_name="mm2gov", standalone_mode=False)
    except click.exceptions.ClickException as exc:
        exc.message = scrub(exc.message)
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except MM2GovError as exc:
        click.echo(f"error: {scrub(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        log.debug("internal error", exc_info=True)
        click.echo(f"error: internal error ({type(exc).__name__}); run with --log-level debug for details",
                   err=True)
        sys.exit(EXIT_RUNTIME)
    sys.exit(code if isinstance(code, int) else 0)
