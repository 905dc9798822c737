"""`mm2gov doctor`: what this machine and the repo's clusters have."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import click

from governance.cli.root import (
    cli,
    format_option,
    secrets_dir_option,
)
from governance.errors import EXIT_RUNTIME

log = logging.getLogger("mm2gov")


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
        from governance.kafka.apply import cluster_report
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
