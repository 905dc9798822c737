"""Operating the flows: `mm2gov failover`, `probe` and `migrate`."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from governance.cli.root import (
    _decided,
    cli,
    format_option,
    opa_url_option,
    secrets_dir_option,
)
from governance.errors import EXIT_VIOLATIONS, MM2GovError

if TYPE_CHECKING:  # the commands import what they run when they run (the CLI starts fast)
    from governance.config.loader import Inventory
    from governance.probe.live import ProbeFlow
    from governance.probe.serve import ProbeMetrics
    from governance.secrets.store import SecretStore

log = logging.getLogger("mm2gov")


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

    only: tuple[str, str] | None = None
    if pair is not None:
        source, _, target = pair.partition("->")
        if not source or not target or "->" in target:
            raise click.BadParameter(f"{pair!r} is not SOURCE->TARGET", param_hint="--flow")
        only = (source, target)
    inventory, decision = _decided(repo, opa_url)
    flows = probe_flows(decision.tenancy, tenant, only)
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


def _probe_serve(inventory: Inventory, flows: list[ProbeFlow], store: SecretStore, per_partition: int, wait: float,
                 host: str, port: int, interval: float) -> None:
    """`probe --serve`: each flow probed every interval (credentials read again each run, so rotated
    Secrets are used), the figures as metrics (governance/probe/serve.py) until SIGTERM or SIGINT."""
    import signal
    import threading
    import time

    from governance.probe import serve as probe_serve
    from governance.probe.assess import assess, misses
    from governance.probe.live import probe_configs, probe_once

    def once(flow: ProbeFlow) -> Callable[[ProbeMetrics], None]:
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
