"""From the repo to the clusters: `mm2gov generate`, `apply` and `drift`."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from governance.cli.root import (
    _desired_state,
    cli,
    format_option,
    opa_url_option,
    repo_argument,
    secrets_dir_option,
    secrets_path_option,
)
from governance.errors import EXIT_VIOLATIONS

log = logging.getLogger("mm2gov")


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
    and objects are left alone. Idempotent; removals run before additions. With --kubeconfig, the
    apiserver first checks every Strimzi change in a dry run: one it refuses stops apply before
    anything changes, on Kubernetes or on the brokers."""
    from governance.kafka.apply import apply_state
    from governance.secrets.store import DirSecretStore

    inventory, state = _desired_state(repo, opa_url, secrets_path)
    kube_plan = None
    if state.strimzi and kubeconfig is not None:  # first: an apiserver that refuses an object stops apply
        from governance.k8s.strimzi_apply import api_client, plan_objects  # before the brokers change

        kube_plan = plan_objects(api_client(kubeconfig), state.strimzi, check=not dry_run)
    elif state.strimzi:
        log.warning("%d Strimzi objects not applied: no --kubeconfig (write them with `mm2gov generate`)",
                    len(state.strimzi))
    results = apply_state(state, inventory.clusters, DirSecretStore(secrets_dir), dry_run=dry_run,
                          batch_size=batch_size)
    kube = None if kube_plan is None else kube_plan.changes if dry_run else kube_plan.apply()
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
