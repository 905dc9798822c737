"""`mm2gov secrets issue` and `secrets rotate`: the secret material of a repo."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

import click

from governance.cli.root import (
    _desired_state,
    cli,
    format_option,
    opa_url_option,
    repo_argument,
)

log = logging.getLogger("mm2gov")


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
    with --kubeconfig, and the old ones stop working. Flows to restart are listed. Nothing changes
    before every cluster answered its admin, every clients CA needed is there and (with --kubeconfig)
    the apiserver accepted each rollout in a dry run."""
    from governance.kafka.apply import client_config
    from governance.render import secrets as render_secrets
    from governance.secrets.rotate import check_tenant, roll_dependants, rotate
    from governance.secrets.store import DirSecretStore

    inventory, state = _desired_state(repo, opa_url, "/etc/mm2gov/secrets")
    check_tenant(state, tenant)
    store, where = _secret_store(target, kubeconfig, system_namespace, state, inventory.clusters)
    admin_store = DirSecretStore(admin_secrets_dir) if admin_secrets_dir else store
    configs = {alias: client_config(alias, cluster, admin_store) for alias, cluster in inventory.clusters.items()}
    kube = None
    if kubeconfig is not None:
        from governance.k8s.strimzi_apply import api_client

        kube = api_client(kubeconfig)
    check_roll = None if kube is None else partial(roll_dependants, kube, state, inventory.clusters,
                                                   generation="dry-run", dry_run=True)
    result = rotate(state, inventory.clusters, store, configs, tenant, key_algorithm, check_roll=check_roll)
    if kube is not None and result.flows:
        rotated_at = max(r.issued_at for r in result.rotated)
        result.rolled = roll_dependants(kube, state, inventory.clusters, result.flows, rotated_at)
    click.echo(render_secrets.rotation_json(result) if output_format == "json" else
               render_secrets.rotation_text(result, where), nl=False)
