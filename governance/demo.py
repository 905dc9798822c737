"""`mm2gov demo`: the story so far, told on the real local stack.

Later issues extend it (policies, generated flows, admission, audit); each
step prints what it shows and what a reader should notice.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import click
from kubernetes import client as k8s

from governance.config import load_inventory
from governance.devstack.stack import REPO_ROOT, Stack, StackSpec
from governance.kafka.admin import admin_client, create_acls, create_topics, upsert_scram_user
from governance.kafka.records import Record, produce, read
from governance.model.acl import AclBinding
from governance.plan.diff import make_plan
from governance.policy.decide import PolicySession
from governance.render import plan as render_plan
from governance.render import violations as render_violations
from governance.secrets.values import random_password


def step(title: str) -> None:
    click.secho(f"\n== {title}", bold=True)


def run_demo(run_dir: Path | None, keep: bool = False) -> None:
    run_dir = run_dir or Path(tempfile.mkdtemp(prefix="mm2gov-demo-"))
    step("Starting the local stack (real Kafka 4, OPA, kube-apiserver) on 127.0.0.1")
    began = time.monotonic()
    stack = Stack(StackSpec(run_dir=run_dir)).up()
    try:
        click.echo(f"ready in {time.monotonic() - began:.1f}s")
        _show_stack(stack)
        _authorizer(stack)
        _replication(stack)
        _policy(stack)
        _kubernetes(stack)
    finally:
        if keep:
            click.echo(f"\nstack left running: mm2gov devstack status --run-dir {run_dir}")
        else:
            step("Tearing down")
            click.echo(f"stopped: {', '.join(stack.down())}")


def _show_stack(stack: Stack) -> None:
    step("What runs where")
    for name, info in stack.describe()["components"].items():
        click.echo(f"  {name:<16} pid {info.get('pid', '-'):<8} {info.get('endpoint', '')}")
    click.echo(f"  logs and certificates under {stack.run_dir}")


def _authorizer(stack: Stack) -> None:
    step("The broker's authorizer keeps tenants apart (SASL_SSL + SCRAM-SHA-512, StandardAuthorizer)")
    source = stack.kafka["source"]
    admin = admin_client(source.admin_config())
    create_topics(admin, ["payments.orders", "marketing.leads"])
    produce(source.admin_config(), "payments.orders",
            [Record(b"order-1", b'{"amount": 42}', [("lob", b"payments")])])
    produce(source.admin_config(), "marketing.leads", [Record(b"lead-1", b'{"email": "x"}', [("lob", b"marketing")])])
    password = random_password()
    upsert_scram_user(admin, "payments-app", password)
    create_acls(admin, [AclBinding("User:payments-app", "TOPIC", "payments.", "PREFIXED", "READ"),
                        AclBinding("User:payments-app", "GROUP", "payments-", "PREFIXED", "READ")])
    click.echo("  User:payments-app may READ topic prefix 'payments.' and group prefix 'payments-'")
    tenant = source.client_config("payments-app", password)
    for topic in ("payments.orders", "marketing.leads"):
        result = read(tenant, topic, 1, timeout=30, group="payments-demo")
        error = result.error.name() if result.error else "none"
        click.echo(f"  payments-app reads {topic:<16} -> {len(result.records)} record(s), broker error: {error}")


def _replication(stack: Stack) -> None:
    step("MirrorMaker 2 (dedicated mode) replicates payments.orders from source to target")
    properties = stack.write_mm2_properties("demo-payments", topics=r"payments\.orders")
    click.echo(f"  properties: {properties} (credentials by ${{file:...}} reference only)")
    stack.start_mirrormaker("demo-payments", properties)
    try:
        result = read(stack.kafka["target"].admin_config(), "source.payments.orders", 1, timeout=120)
    finally:
        stack.stop_mirrormaker("demo-payments")
    for record in result.records:
        click.echo(f"  target source.payments.orders: key={record.key!r} value={record.value!r}")
        click.echo(f"  headers kept: {record.headers}")
    if not result.records:
        click.echo(f"  nothing replicated (error: {result.error and result.error.name()})")


def _policy(stack: Stack) -> None:
    step("Policies in the pull request: validate and plan examples/acme with the stack's OPA")
    assert stack.opa is not None
    acme = REPO_ROOT / "examples" / "acme"
    with tempfile.TemporaryDirectory(prefix="mm2gov-demo-pr-") as tmp, PolicySession(stack.opa.url) as opa:
        head_dir = Path(tmp) / "acme"
        shutil.copytree(acme, head_dir)
        marketing = head_dir / "tenants" / "marketing.yaml"
        marketing.write_text(marketing.read_text().replace(
            '  - {name: "User:marketing-app", access: [read, write]}',
            '  - {name: "User:marketing-app", access: [read, write]}\n  - {name: "User:marketing-bi", access: [read]}'))
        base = opa.decide(load_inventory(acme))
        click.echo(f"  examples/acme: {render_violations.summary(base.violations)}")
        for name, scope in sorted(base.scopes.items()):
            remote = sorted({p for f in scope["flows"] for p in f["remote_topic_prefixes"]})
            click.echo(f"    {name:<10} {scope['classification']:<12} lives on {', '.join(scope['clusters'])}; "
                       f"remote prefixes: {', '.join(remote) or '-'}")
        bad = opa.decide(load_inventory(REPO_ROOT / "examples" / "bad" / "grant_wildcard"))
        click.echo("  examples/bad/grant_wildcard:")
        click.echo("    " + render_violations.text(list(bad.violations)).splitlines()[0])
        plan = make_plan(base, opa.decide(load_inventory(head_dir)))
        click.echo("  a pull request adds User:marketing-bi to marketing; `mm2gov plan` shows:")
        for line in render_plan.text(plan, "main").splitlines():
            if " gains " in line or " loses " in line:
                click.echo("  " + line)


def _kubernetes(stack: Stack) -> None:
    step("kube-apiserver serves Strimzi's CRDs")
    assert stack.kube is not None
    crds = k8s.ApiextensionsV1Api(stack.kube.client()).list_custom_resource_definition().items
    for crd in sorted(crds, key=lambda c: c.metadata.name):
        click.echo(f"  {crd.metadata.name}")
