"""`mm2gov demo`: the story so far, told on the real local stack.

examples/acme in a pull request (validate, plan), applied to three real Kafka
clusters, replicated by one isolated MM2 per tenant flow from the generated
properties, and its Strimzi resources admitted by a real kube-apiserver. Each
step prints what it shows and what a reader should notice.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import click
import yaml
from kubernetes import client as k8s

from devstack.stack import REPO_ROOT, Stack, StackSpec
from governance.compile.mm2 import tenant_of
from governance.config import load_inventory
from governance.kafka.admin import admin_client, create_acls, create_topics, upsert_scram_user
from governance.kafka.records import Record, produce, read
from governance.model.acl import AclBinding
from governance.model.names import INTERNAL_TOPIC_PREFIX, scram_secret
from governance.plan.diff import make_plan
from governance.policy.decide import PolicySession
from governance.render import plan as render_plan
from governance.render import violations as render_violations
from governance.secrets.store import DirSecretStore
from governance.secrets.values import random_password


def step(title: str) -> None:
    click.secho(f"\n== {title}", bold=True)


DEMO_CLUSTERS = ("onprem", "onprem-dr", "cloud")  # examples/acme's cluster aliases
DEMO_RECORDS = {  # tenant -> (topic on onprem, consumer principal)
    "payments": ("payments.orders", "payments-app"),
    "marketing": ("marketing.leads", "marketing-app"),
    "risk": ("risk.exposures", "risk-reporting"),
    "logistics": ("logistics.shipments", "logistics-app"),
}


def run_demo(run_dir: Path | None, keep: bool = False) -> None:
    run_dir = run_dir or Path(tempfile.mkdtemp(prefix="mm2gov-demo-"))
    step("Starting the local stack: three Kafka 4 clusters (onprem, onprem-dr, cloud), OPA, kube-apiserver")
    began = time.monotonic()
    stack = Stack(StackSpec(run_dir=run_dir, kafka_clusters=DEMO_CLUSTERS)).up()
    try:
        click.echo(f"ready in {time.monotonic() - began:.1f}s")
        _show_stack(stack)
        _policy(stack)
        repo, secrets, out = _local_acme(stack, run_dir)
        _apply(repo, secrets, stack)
        _replicate(stack, secrets, out)
        _kubernetes(stack)
        _plant_misrouted_record(stack)
        if not keep:  # their records are replicated; five JVMs less leaves the cores to Spark
            for flow_id in sorted(stack.mirrormakers):
                stack.stop_mirrormaker(flow_id)
        _audit(stack, repo, secrets, run_dir)
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


def _local_acme(stack: Stack, run_dir: Path) -> tuple[Path, Path, Path]:
    """examples/acme with its clusters pointed at the stack; admin credentials and CA in a secret dir."""
    repo, secrets, out = run_dir / "acme", run_dir / "secret-store", run_dir / "generated"
    shutil.copytree(REPO_ROOT / "examples" / "acme", repo, dirs_exist_ok=True)
    (repo / "clusters.yaml").write_text(stack.governance_clusters())
    stack.export_secret_store(secrets)
    return repo, secrets, out


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "governance", "--log-level", "warning", *args],
                          capture_output=True, text=True, cwd=REPO_ROOT)


def _cli_with_progress(*args: str) -> subprocess.CompletedProcess[str]:
    """`_cli`, echoing the command's progress (its stderr) as it comes, minus the JVM's banner."""
    process = subprocess.Popen([sys.executable, "-m", "governance", "--log-level", "warning", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    errors: list[str] = []
    assert process.stderr is not None and process.stdout is not None
    for line in process.stderr:
        errors.append(line)
        if not line.startswith("WARNING: Using incubator modules"):
            click.echo(f"    | {line.rstrip()}")
    stdout = process.stdout.read()
    return subprocess.CompletedProcess(process.args, process.wait(), stdout, "".join(errors))


def _apply(repo: Path, secrets: Path, stack: Stack) -> None:
    step("mm2gov apply: least-privilege ACLs and SCRAM users for tenants and their MM2s, on real brokers")
    for attempt in ("first", "second"):
        began = time.monotonic()
        done = _cli("apply", str(repo), "--secrets-dir", str(secrets), "--format", "json")
        if done.returncode != 0:
            raise click.ClickException(f"apply failed: {done.stderr.strip()}")
        result = json.loads(done.stdout)
        per_cluster = ", ".join(f"{c['cluster']}: +{len(c['create_acls'])} ACLs +{len(c['create_users'])} users"
                                for c in result["clusters"])
        click.echo(f"  {attempt} apply ({time.monotonic() - began:.1f}s): {result['changes']} changes ({per_cluster})")
    if result["changes"] != 0:
        raise click.ClickException(f"the second apply made {result['changes']} changes: apply is not idempotent")
    click.echo("  measured: the second apply made 0 changes")


def _replicate(stack: Stack, secrets: Path, out: Path) -> None:
    step("mm2gov generate + one isolated MirrorMaker 2 per tenant flow, from the generated properties")
    done = _cli("generate", str(out.parent / "acme"), "--out", str(out), "--secrets-path", str(secrets))
    if done.returncode != 0:
        raise click.ClickException(f"generate failed: {done.stderr.strip()}")
    click.echo(f"  {done.stdout.strip()}")
    onprem = stack.kafka["onprem"]
    create_topics(admin_client(onprem.admin_config()), [topic for topic, _ in DEMO_RECORDS.values()])
    for tenant, (topic, _) in DEMO_RECORDS.items():
        produce(onprem.admin_config(), topic, [Record(f"{tenant}-1".encode(), b"{}", [("lob", tenant.encode())])])
    flows = sorted(out.glob("mm2/*.properties"))
    began = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(flows)) as pool:
        list(pool.map(lambda p: stack.start_mirrormaker(
            p.stem, p, metrics_config=out / "monitoring" / "jmx" / f"{tenant_of(p.read_text())}.yaml"), flows))
    click.echo(f"  {len(flows)} MirrorMaker 2 processes started in {time.monotonic() - began:.1f}s: "
               + ", ".join(p.stem for p in flows))
    store = DirSecretStore(secrets)
    for tenant, (topic, user) in DEMO_RECORDS.items():
        target = "onprem-dr" if tenant == "risk" else "cloud"
        config = stack.kafka[target].client_config(user, store.get(scram_secret(target, f"User:{user}"), "password"))
        remote = topic if tenant == "logistics" else f"onprem.{topic}"  # logistics uses the identity policy
        own = read(config, remote, 1, timeout=120, group=f"{tenant}-demo")
        headers = own.records[0].headers if own.records else []
        where = f"{target}:{remote}"
        click.echo(f"  {user:<15} reads {where:<36} -> {len(own.records)} record(s) {headers}")
    config = stack.kafka["cloud"].client_config("marketing-app",
                                                store.get(scram_secret("cloud", "User:marketing-app"), "password"))
    other = read(config, "onprem.payments.orders", 1, timeout=30, group="marketing-demo")
    click.echo(f"  marketing-app   reads {'cloud:onprem.payments.orders':<36} -> refused by the broker: "
               f"{other.error.name() if other.error else 'NOT REFUSED'}")
    if other.error is None:
        raise click.ClickException("marketing-app read payments' remote topic on cloud: isolation does not hold")
    _check_topics(stack)
    step("Per-tenant monitoring: each flow's replication latency from its MM2's /metrics (JMX exporter)")
    click.echo("  (the records were written before the flows started, so the latency includes the start-up)")
    for flow_id, mm2 in sorted(stack.mirrormakers.items()):
        latency = [line for line in mm2.metrics().splitlines()
                   if line.startswith("kafka_connect_mirror_source_connector_replication_latency_ms_max{")]
        click.echo(f"  {flow_id:<32} {latency[0] if latency else '(no records replicated yet)'}")


SHARED_MM2_TOPICS = ("heartbeats", ".heartbeats", "checkpoints.internal", "mm2-offset-syncs", "mm2-configs",
                     "mm2-offsets", "mm2-status")


def _check_topics(stack: Stack) -> None:
    """What is on each cluster, counted in this run: MM2 topics shared between flows, and restricted
    tenants' topics on a cloud-zone cluster. The demo fails when either is found."""
    inventory = load_inventory(REPO_ROOT / "examples" / "acme")
    restricted = [p for t in inventory.tenants.values() if t.classification == "restricted" for p in t.topic_prefixes]
    problems = []
    for alias, cluster in sorted(stack.kafka.items()):
        topics = sorted(admin_client(cluster.admin_config()).list_topics(timeout=10).topics)
        # a flow's own MM2 topics (Connect's, offset syncs, checkpoints, heartbeats) are inside mm2gov.<flow>.
        own = [t for t in topics if t.startswith(INTERNAL_TOPIC_PREFIX)]
        shared = [t for t in topics if t not in own and any(mark in t for mark in SHARED_MM2_TOPICS)]
        on_cloud = [t for t in topics if inventory.clusters[alias].zone == "cloud"
                    and any(p in t for p in restricted)]
        click.echo(f"  {alias}: {len(topics)} topics; flows' own MM2 topics: {len(own)}; "
                   f"shared MM2 topics: {len(shared)}"
                   + (f"; restricted tenants' topics: {len(on_cloud)}" if inventory.clusters[alias].zone == "cloud"
                      else ""))
        problems += [f"{alias}: shared MM2 topic {t}" for t in shared] + [f"{alias}: restricted {t}" for t in on_cloud]
    if problems:
        raise click.ClickException("isolation does not hold: " + "; ".join(problems))
    click.echo(f"  measured: no topic shared between flows, no restricted prefix ({', '.join(restricted)}) "
               "on a cloud-zone cluster")


HOSTILE_EXAMPLES = ("grant_wildcard", "reserved_name_claimed", "reserved_principal", "derived_name_collision",
                    "namespace_reserved", "prefix_collision")


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
        for tenant in sorted(base.tenancy, key=lambda t: t.tenant):
            remote = sorted({p for f in tenant.flows for p in f.remote_topic_prefixes})
            click.echo(f"    {tenant.tenant:<10} {tenant.classification:<12} lives on {', '.join(tenant.clusters)}; "
                       f"remote prefixes: {', '.join(remote) or '-'}")
        click.echo("  a hostile tenant's tries (examples/bad), each refused by the rule named:")
        for example in HOSTILE_EXAMPLES:
            bad = opa.decide(load_inventory(REPO_ROOT / "examples" / "bad" / example))
            first = bad.violations[0] if bad.violations else None
            if first is None:
                raise click.ClickException(f"examples/bad/{example} was not refused")
            click.echo(f"    {example:<24} {len(bad.violations)} violation(s), e.g. {first.severity} "
                       f"{first.rule}: {first.message[:90]}...")
        plan = make_plan(base, opa.decide(load_inventory(head_dir)))
        click.echo("  a pull request adds User:marketing-bi to marketing; `mm2gov plan` shows:")
        for line in render_plan.text(plan, "main").splitlines():
            if " gains " in line or " loses " in line:
                click.echo("  " + line)


def _kubernetes(stack: Stack) -> None:
    step("Strimzi resources for examples/acme, accepted by a real kube-apiserver with Strimzi's CRDs")
    assert stack.kube is not None
    with tempfile.TemporaryDirectory(prefix="mm2gov-demo-strimzi-") as tmp:
        done = _cli("generate", str(REPO_ROOT / "examples" / "acme"), "--out", tmp)
        if done.returncode != 0:
            raise click.ClickException(f"generate failed: {done.stderr.strip()}")
        objects = [yaml.safe_load(p.read_text()) for p in sorted(Path(tmp).glob("strimzi/*.yaml"))]
    core, api = k8s.CoreV1Api(stack.kube.client()), k8s.CustomObjectsApi(stack.kube.client())
    for namespace in sorted({o["metadata"]["namespace"] for o in objects}):
        core.create_namespace({"metadata": {"name": namespace}})
    plural = {"KafkaMirrorMaker2": "kafkamirrormaker2s", "KafkaUser": "kafkausers", "KafkaTopic": "kafkatopics"}
    for obj in objects:
        api.create_namespaced_custom_object("kafka.strimzi.io", "v1", obj["metadata"]["namespace"],
                                            plural[obj["kind"]], obj)
    kinds = Counter(o["kind"] for o in objects)
    click.echo("  created " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))


LEAKS = [  # what hand-made changes and a careless producer leave behind: (cluster, binding)
    ("cloud", AclBinding("User:marketing-app", "TOPIC", "*", "LITERAL", "READ")),  # a wildcard ACL
    ("onprem", AclBinding("User:marketing-app", "TOPIC", "risk.", "PREFIXED", "READ")),  # a cross-tenant grant
    ("onprem", AclBinding("User:old-batch-job", "TOPIC", "payments.", "PREFIXED", "READ")),  # a stale user's grant
]


def _plant_misrouted_record(stack: Stack) -> None:
    """A record carrying marketing's marker in payments' topic, left for MM2 to replicate: the
    audit finds it on the source and on both targets."""
    produce(stack.kafka["onprem"].admin_config(), "payments.orders",
            [Record(b"misrouted", b"{}", [("lob", b"marketing")])])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = read(stack.kafka["cloud"].admin_config(), "onprem.payments.orders", 100, timeout=5)
        if any(record.key == b"misrouted" for record in done.records):
            return
    click.echo("  (the misrouted record had not reached cloud after 60 s; the audit will see it on onprem)")


def _audit(stack: Stack, repo: Path, secrets: Path, run_dir: Path) -> None:
    step("The audit (PySpark): leaks planted by hand on the live clusters, found in topics, ACLs and records")
    for alias, binding in LEAKS:
        create_acls(admin_client(stack.kafka[alias].admin_config()), [binding])
        click.echo(f"  planted on {alias}: {binding.principal} {binding.operation} {binding.resource_type} "
                   f"{binding.pattern_type} {binding.resource_name}")
    upsert_scram_user(admin_client(stack.kafka["onprem"].admin_config()), "old-batch-job", random_password())
    click.echo("  planted on onprem: SCRAM user old-batch-job (no tenant declares it)")
    click.echo("  planted on onprem: a record in payments.orders whose lob header says marketing "
               "(and replicated to cloud and onprem-dr by payments' flows)")
    out = run_dir / "audit"
    done = _cli_with_progress("audit", str(repo), "--out", str(out), "--secrets-dir", str(secrets),
                              "--records-per-partition", "500")
    if done.returncode not in (0, 1):
        raise click.ClickException(f"audit failed: {done.stderr.strip()[-2000:]}")
    document = json.loads((out / "audit.json").read_text())
    by_check = Counter(f["check_id"] for f in document["findings"])
    click.echo(f"  {done.stdout.strip().splitlines()[0]}")
    for check_id, count in sorted(by_check.items()):
        example = next(f for f in document["findings"] if f["check_id"] == check_id)
        click.echo(f"    {check_id:<24} {count:>3}  e.g. {example['message'][:110]}")
    matrix = document.get("access_matrix", {})
    cells = [(a, b, n) for a, row in matrix.get("counts", {}).items() for b, n in row.items() if n]
    click.echo(f"  tenant x tenant reach from this audit ({matrix.get('findings', 0)} findings in "
               f"{len(cells)} cells; row reaches column's data):")
    for accessor, owner, count in sorted(cells):
        checks = ", ".join(f"{c} {n}" for c, n in matrix["checks"][accessor][owner].items())
        click.echo(f"    {accessor or '(no tenant)':<12} -> {owner:<12} {count:>3}  ({checks})")
    if not cells:
        raise click.ClickException("the audit's access matrix is empty although leaks were planted")
    click.echo(f"  HTML report: {out / 'report.html'}  (JSON and SARIF beside it, history in {out / 'history'})")
