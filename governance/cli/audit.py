"""`mm2gov audit`: the live clusters against the resolved tenancy."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from governance.cli.root import (
    _decided,
    cli,
    opa_url_option,
    repo_argument,
    secrets_dir_option,
)
from governance.errors import EXIT_RUNTIME, EXIT_VIOLATIONS

log = logging.getLogger("mm2gov")


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
