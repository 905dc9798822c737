"""`mm2gov admission serve`: the webhook at deployment."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from governance.cli.root import (
    cli,
    opa_url_option,
    repo_argument,
)
from governance.errors import MM2GovError

log = logging.getLogger("mm2gov")


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
