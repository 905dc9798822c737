"""`mm2gov probe` against a real flow: two real Kafka 4 clusters, the flow's real dedicated MirrorMaker 2 as
`mm2gov generate` writes it (intervals shortened), the ACLs, SCRAM users and passwords `mm2gov apply` gives.

- the first run creates the probe topic (3 partitions) as the probe user, and its canaries arrive;
- a healthy at-least-once flow: nothing lost, duplicated or misplaced, latencies reported, exit 0;
- the flow's MM2 killed (SIGKILL): a run with a short --wait reports every canary lost, exit 1;
- a run started while MM2 is down, then MM2 restarted: every canary arrives and the SLO is met again, and
  the killed run's canaries, arriving late, are `foreign` to it;
- the probe user, asked of the real brokers, reads and writes nothing but its probe topics.
"""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kubernetes import dynamic

from devstack.process import free_port
from devstack.repo import write_stack_repo
from governance.config import load_inventory
from governance.kafka.admin import admin_client, create_topics
from governance.model.names import PROBE_PARTITIONS, flow_id, probe_principal, probe_topic
from governance.probe.live import user_config
from governance.secrets.store import DirSecretStore
from tests.conftest import REPO_ROOT, run_cli
from tests.integration import test_manifests as manifests
from tests.integration.test_replication_policy import paced
from tests.tools.offsets import total_end_offset
from tests.tools.wait import wait_for

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

log = logging.getLogger(__name__)

PER_PARTITION = 20
# Generous on purpose: this machine's load decides MM2's start-up and copy times, which the test does not
# judge; the loss, duplicate and affinity verdicts are the ones it asserts.
SLO = {"latency_p99_ms": 300_000}


def probe(repo: Path, secrets: Path, tenant: str, wait: float) -> subprocess.CompletedProcess[str]:
    return run_cli("probe", tenant, "--repo", str(repo), "--secrets-dir", str(secrets), "--per-partition",
                   str(PER_PARTITION), "--wait", str(wait), "--format", "json", timeout=wait + 300)


def flow_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    document = json.loads(done.stdout)
    log.warning("probe: %s", json.dumps({k: v for k, v in document["flows"][0].items() if k != "lost_canaries"}))
    assert document["schema"] == "mm2gov.probe/v1" and len(document["flows"]) == 1, document
    return document["flows"][0]


@pytest.fixture(scope="module")
def probed(stack, tmp_path_factory):
    run = uuid.uuid4().hex[:5]
    tenant, other = f"prb{run}", f"oth{run}"
    root = tmp_path_factory.mktemp("probe")
    repo, secrets, out = root / "repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, [tenant, other])
    tenant_file = repo / "tenants" / f"{tenant}.yaml"
    declared = yaml.safe_load(tenant_file.read_text())
    declared["flows"][0]["slo"] = SLO
    tenant_file.write_text(yaml.safe_dump(declared))
    stack.export_secret_store(secrets)
    source = stack.kafka["source"]
    create_topics(admin_client(source.admin_config()), [f"{other}.events", f"{tenant}.orders"], partitions=3)
    applied = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    generated = run_cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr
    flow = flow_id(tenant, "source", "target")
    properties = root / f"{flow}.properties"
    properties.write_text(paced((out / "mm2" / f"{flow}.properties").read_text()))
    results: dict[str, Any] = {"tenant": tenant, "other": other, "repo": repo, "secrets": secrets}
    started = False
    try:
        stack.start_mirrormaker(flow, properties)
        started = True
        results["first"] = probe(repo, secrets, tenant, 180)
        results["healthy"] = probe(repo, secrets, tenant, 120)
        stack.kill_mirrormaker(flow)
        started = False
        results["down"] = probe(repo, secrets, tenant, 5)
        # a run that marks its start and sends while MM2 is down, then MM2 comes back
        topic = probe_topic([f"{tenant}."])
        before = end_offsets(source.admin_config(), topic)
        command = [sys.executable, "-m", "governance", "probe", tenant, "--repo", str(repo), "--secrets-dir",
                   str(secrets), "--per-partition", str(PER_PARTITION), "--wait", "240", "--format", "json"]
        pending = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   cwd=REPO_ROOT)
        wait_for("the run's canaries on the source", lambda: end_offsets(source.admin_config(), topic)
                 >= before + PROBE_PARTITIONS * PER_PARTITION, 120)
        stack.start_mirrormaker(flow, properties)
        started = True
        stdout, stderr = pending.communicate(timeout=600)
        results["recovered"] = subprocess.CompletedProcess(command, pending.returncode, stdout, stderr)
        results["metrics"], results["served"] = serve_metrics(repo, secrets, tenant)
    finally:
        if started:
            stack.stop_mirrormaker(flow)
    return results


def scrape(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            return answer.read().decode()
    except OSError:
        return ""


def serve_metrics(repo: Path, secrets: Path, tenant: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    """`probe --serve` until its /metrics shows two runs that met the SLO; then SIGTERM."""
    port = free_port()
    command = [sys.executable, "-m", "governance", "probe", tenant, "--repo", str(repo), "--secrets-dir",
               str(secrets), "--per-partition", "5", "--wait", "60", "--serve", "--port", str(port), "--interval", "2"]
    served = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        ok = f'mm2gov_probe_runs_total{{flow="{flow_id(tenant, "source", "target")}",result="ok",tenant="{tenant}"}}'
        text = wait_for("two probe runs in /metrics", lambda: next(
            (t for t in [scrape(port)] if any(line.startswith(ok) and float(line.split()[-1]) >= 2
                                              for line in t.splitlines())), None), 300)
    finally:
        served.send_signal(signal.SIGTERM)
        stdout, stderr = served.communicate(timeout=60)
    return text, subprocess.CompletedProcess(command, served.returncode, stdout, stderr)


def end_offsets(config: dict[str, Any], topic: str) -> int:
    return total_end_offset(config, topic, range(PROBE_PARTITIONS))


def test_the_first_run_creates_the_probe_topic_and_its_canaries_arrive(probed, stack):
    first = probed["first"]
    assert first.returncode == 0, (first.stdout, first.stderr)
    flow = flow_of(first)
    assert (flow["sent"], flow["delivered"], flow["lost"]) == (3 * PER_PARTITION, 3 * PER_PARTITION, 0), flow
    metadata = admin_client(stack.kafka["source"].admin_config()).list_topics(flow["topic"], timeout=20)
    assert len(metadata.topics[flow["topic"]].partitions) == PROBE_PARTITIONS


def test_a_healthy_flow_meets_its_slo(probed):
    healthy = probed["healthy"]
    assert healthy.returncode == 0, (healthy.stdout, healthy.stderr)
    flow = flow_of(healthy)
    assert (flow["sent"], flow["delivered"], flow["lost"], flow["duplicated"], flow["reordered"],
            flow["misplaced"]) == (3 * PER_PARTITION, 3 * PER_PARTITION, 0, 0, 0, 0), flow
    latency = flow["latency_ms"]
    assert 0 <= latency["p50"] <= latency["p99"] <= latency["max"], latency
    assert flow["ok"] and flow["misses"] == []
    assert flow["remote_topic"] == f"source.{flow['topic']}"


def test_with_mm2_killed_the_canaries_are_reported_lost(probed):
    down = probed["down"]
    assert down.returncode == 1, (down.stdout, down.stderr)
    flow = flow_of(down)
    assert (flow["sent"], flow["delivered"], flow["lost"]) == (3 * PER_PARTITION, 0, 3 * PER_PARTITION), flow
    assert flow["latency_ms"] is None and not flow["ok"]
    assert flow["misses"] == [f"{3 * PER_PARTITION} of {3 * PER_PARTITION} canaries lost (SLO: at most 0)"]
    assert len(flow["lost_canaries"]) == 3 * PER_PARTITION


def test_after_mm2_restarts_the_slo_is_met_and_the_killed_runs_canaries_are_foreign(probed):
    recovered = probed["recovered"]
    assert recovered.returncode == 0, (recovered.stdout, recovered.stderr)
    flow = flow_of(recovered)
    assert (flow["sent"], flow["delivered"], flow["lost"], flow["misplaced"]) == (
        3 * PER_PARTITION, 3 * PER_PARTITION, 0, 0), flow
    # the killed run's canaries were copied after this run took the target's end offsets
    assert flow["foreign"] >= 3 * PER_PARTITION, flow
    assert flow_of(probed["down"])["run"] != flow["run"]


def test_text_output_and_errors_hold_no_secret(probed):
    done = run_cli("probe", probed["tenant"], "--repo", str(probed["repo"]), "--secrets-dir",
                   str(probed["secrets"]), "--per-partition", "1", "--wait", "1")
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.startswith(("OK  ", "SLO MISSED  ")) and "canaries arrived" in done.stdout
    store = DirSecretStore(probed["secrets"])
    password = store.get(f"scram-source-mm2gov-probe-{probed['tenant']}", "password").reveal()
    assert password not in done.stdout + done.stderr
    for result in ("first", "healthy", "down", "recovered"):
        assert password not in probed[result].stdout + probed[result].stderr


def _refused(action) -> str:
    try:
        action()
    except KafkaException as exc:
        return exc.args[0].name()
    return "allowed"


def test_the_probe_user_reaches_nothing_but_its_probe_topics(probed, stack):
    inventory = load_inventory(probed["repo"])
    store = DirSecretStore(probed["secrets"])
    principal = probe_principal(probed["tenant"])
    config = user_config("source", inventory.clusters["source"], store, principal)
    tenant, other = probed["tenant"], probed["other"]

    def produce(topic: str) -> None:
        producer = Producer({**config, "message.timeout.ms": 15000})
        errors: list[KafkaError] = []
        producer.produce(topic, b"x", on_delivery=lambda error, _m: errors.append(error) if error else None)
        producer.flush(30)
        if errors:
            raise KafkaException(errors[0])

    def read(topic: str) -> None:
        """Allowed once a fetch reaches the partition's end (a refused fetch never does); refused on the error."""
        consumer = Consumer({**config, "group.id": f"probe-acl-{uuid.uuid4().hex[:6]}", "enable.auto.commit": False,
                             "enable.partition.eof": True})
        try:
            metadata = consumer.list_topics(topic, timeout=20).topics[topic]  # refused DESCRIBE shows here
            if metadata.error is not None:
                raise KafkaException(metadata.error)
            consumer.assign([TopicPartition(topic, 0, 0)])
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                message = consumer.poll(1)
                if message is None or not message.error():
                    continue
                if message.error().code() == KafkaError._PARTITION_EOF:
                    return None
                # the group is never joined (assign, no commits): its refusal is what the probe ignores too
                if message.error().code() != KafkaError.GROUP_AUTHORIZATION_FAILED:
                    raise KafkaException(message.error())
            raise AssertionError(f"{topic}: neither its end nor a refusal in 20 s")
        finally:
            consumer.close()

    def create(topic: str) -> None:
        admin = AdminClient(config)  # kept alive until the answer: a collected client cancels its requests
        admin.create_topics([NewTopic(topic, 1)], operation_timeout=15)[topic].result()

    assert _refused(lambda: produce(probe_topic([f"{tenant}."]))) == "allowed"  # its own probe topic
    assert _refused(lambda: produce(f"{other}.events")) == "TOPIC_AUTHORIZATION_FAILED"
    assert _refused(lambda: produce(f"{tenant}.orders")) == "TOPIC_AUTHORIZATION_FAILED"
    assert _refused(lambda: read(probe_topic([f"{tenant}."]))) == "TOPIC_AUTHORIZATION_FAILED"  # write-only there
    assert _refused(lambda: read(f"{other}.events")) == "TOPIC_AUTHORIZATION_FAILED"
    assert _refused(lambda: read(f"{tenant}.orders")) == "TOPIC_AUTHORIZATION_FAILED"
    assert _refused(lambda: create(f"{other}.mm2gov-probe")) == "TOPIC_AUTHORIZATION_FAILED"
    assert _refused(lambda: create(f"{tenant}.other")) == "TOPIC_AUTHORIZATION_FAILED"
    config = user_config("target", inventory.clusters["target"], store, principal)
    assert _refused(lambda: read(f"source.{probe_topic([f'{tenant}.'])}")) == "allowed"
    assert _refused(lambda: produce(f"source.{probe_topic([f'{tenant}.'])}")) == "TOPIC_AUTHORIZATION_FAILED"
    assert _refused(lambda: read(f"source.{other}.events")) == "TOPIC_AUTHORIZATION_FAILED"


def test_serve_exports_each_runs_figures_per_tenant_and_flow(probed):
    served, text = probed["served"], probed["metrics"]
    assert served.returncode == 0, served.stderr
    labels = f'flow="{flow_id(probed["tenant"], "source", "target")}",tenant="{probed["tenant"]}"'
    values = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
              if line and not line.startswith("#")}
    flow = flow_id(probed["tenant"], "source", "target")
    runs = values[f'mm2gov_probe_runs_total{{flow="{flow}",result="ok",tenant="{probed["tenant"]}"}}']
    assert runs >= 2
    assert values[f"mm2gov_probe_canaries_sent_total{{{labels}}}"] == runs * 3 * 5
    assert values[f"mm2gov_probe_canaries_delivered_total{{{labels}}}"] == runs * 3 * 5
    assert values[f"mm2gov_probe_canaries_lost_total{{{labels}}}"] == 0
    assert values[f"mm2gov_probe_slo_met{{{labels}}}"] == 1
    assert values[f"mm2gov_probe_slo_latency_p99_seconds{{{labels}}}"] == SLO["latency_p99_ms"] / 1000
    assert values[f"mm2gov_probe_latency_seconds_count{{{labels}}}"] == runs * 3 * 5
    assert values[f"mm2gov_probe_last_run_timestamp_seconds{{{labels}}}"] > 0
    assert all(probed["tenant"] in key for key in values if key.startswith("mm2gov_probe_") and "{" in key)


@pytest.fixture(scope="module")
def api(stack) -> dynamic.DynamicClient:
    return dynamic.DynamicClient(stack.kube.client())


def test_the_k8s_probe_deployment_is_accepted(api):
    """k8s/probe as kustomize builds it, dry-run created with strict validation by the real kube-apiserver."""
    docs = manifests._build(REPO_ROOT / "k8s" / "probe")
    assert {doc["kind"] for doc in docs} == {"Deployment", "Service"}
    [deployment] = [doc for doc in docs if doc["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["containers"][0]["args"][:2] == ["probe", "payments"] and "--serve" in pod["containers"][0]["args"]
    mounted = {s["secret"]["name"] for v in pod["volumes"] if "projected" in v for s in v["projected"]["sources"]}
    assert {name for name in mounted if name.startswith("scram-")} == {
        "scram-onprem-mm2gov-probe-payments", "scram-cloud-mm2gov-probe-payments"}  # its own user's only
    manifests._accepted(api, docs)
    manifests._refused(api, docs, "Deployment", [
        lambda d: d["spec"]["template"]["spec"]["containers"][0].update(ports=[{"containerPort": "metrics"}]),
        manifests._unknown_field(["spec", "template", "spec"]),
    ])
