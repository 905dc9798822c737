"""The image's install steps, run into a fresh prefix (no container engine on these machines).

image/Dockerfile's last stage is `image/install.sh`; here the same script installs the wheel (with
the `audit` extra), the pinned opa, the Spark Kafka jars and a Java home into a temporary prefix.
Then, with an environment that has neither the checkout, nor the cache, nor opa on PATH, the
prefix's `bin/mm2gov`: finds every tool inside the prefix (`doctor`), serves the admission webhook
(with its own OPA) that decides real AdmissionReviews, and audits the live stack in local mode: it finds a
leak planted on the real cluster and prints only its own progress lines and summary.
"""

from __future__ import annotations

import http.client
import json
import shutil
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from devstack import tools
from devstack.files import write_private
from devstack.repo import write_stack_repo
from governance.kafka.admin import admin_client, create_acls, delete_acls
from governance.model.acl import AclBinding
from governance.process import free_port
from governance.secrets.pki import issue_cert
from tests.conftest import REPO_ROOT, run_cli
from tests.tools.audit_output import assert_only_the_audits_output
from tests.tools.spark_conf import submit_args
from tests.tools.wheels import run, wheelhouse

pytestmark = pytest.mark.integration

INSTALL = REPO_ROOT / "image" / "install.sh"
LEAK = AclBinding("User:img-a-app", "TOPIC", "*", "LITERAL", "READ")  # ACL_WILDCARD, this module's own tenant


@pytest.fixture(scope="module")
def prefix(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    scratch = tmp_path_factory.mktemp("image-build")
    house = wheelhouse(wheel, scratch, audit=True)
    jars = {jar.parent for jar in tools.spark_kafka_jars()}
    assert len(jars) == 1
    java_home = tools.java().resolve().parents[1]
    target = tmp_path_factory.mktemp("image-prefix") / "opt" / "mm2gov"
    assert not target.resolve().is_relative_to(REPO_ROOT)
    done = run(["bash", str(INSTALL), "--prefix", str(target), "--wheel", str(wheel), "--find-links", str(house),
                "--opa", str(tools.opa()), "--java-home", str(java_home), "--spark-kafka-jars", str(jars.pop()),
                "--python", sys.executable], cwd=scratch)
    assert done.stdout.splitlines()[-1].startswith(f"mm2gov: installed; run {target}/bin/mm2gov")
    return target


@pytest.fixture(scope="module")
def bare_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """No checkout, no mm2gov cache, no opa on PATH, no JAVA_HOME: only what a container has."""
    home = tmp_path_factory.mktemp("home")
    path = "/usr/bin:/bin"
    assert shutil.which("opa", path=path) is None
    return {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8", "SPARK_LOCAL_IP": "127.0.0.1"}


def in_prefix(prefix: Path, env: dict[str, str], cwd: Path, *args: str, timeout: float = 300) -> \
        subprocess.CompletedProcess[str]:
    return subprocess.run([str(prefix / "bin" / "mm2gov"), *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout)


def test_install_refuses_incomplete_inputs(tmp_path: Path) -> None:
    empty = tmp_path / "jars"
    empty.mkdir()
    wheel = tmp_path / "mm2gov-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    done = subprocess.run(["bash", str(INSTALL), "--prefix", str(tmp_path / "p"), "--wheel", str(wheel),
                           "--opa", str(tools.opa()), "--java-home", str(tools.java().resolve().parents[1]),
                           "--spark-kafka-jars", str(empty)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().startswith(f"error: --spark-kafka-jars {empty}: expected spark-sql-kafka")
    assert not (tmp_path / "p").exists()  # nothing half-installed
    done = subprocess.run(["bash", str(INSTALL), "--prefix", str(tmp_path / "p")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "--wheel" in done.stderr


def test_every_tool_is_found_inside_the_prefix(prefix: Path, bare_env: dict[str, str], tmp_path: Path) -> None:
    done = in_prefix(prefix, bare_env, tmp_path, "doctor", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    found = {tool["name"]: tool for tool in json.loads(done.stdout)["tools"]}
    assert all(tool["found"] for tool in found.values()), found
    assert Path(found["opa"]["location"]) == prefix / "bin" / "opa"
    assert found["opa"]["source"] == "$MM2GOV_OPA"
    assert Path(found["pyspark"]["location"]).is_relative_to(prefix / "venv")
    assert Path(found["confluent-kafka"]["location"]).is_relative_to(prefix / "venv")
    assert found["java"]["source"] == "$JAVA_HOME"
    jars = [name for name in found if name not in ("opa", "java", "confluent-kafka", "pyspark")]
    assert jars and all(str(prefix / "share" / "spark-kafka") in json.dumps(found[name]) for name in jars)


def _https(port: int, ca: str) -> http.client.HTTPSConnection:
    return http.client.HTTPSConnection("127.0.0.1", port, context=ssl.create_default_context(cafile=ca), timeout=10)


def _review(uid: str, obj: dict) -> bytes:
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "kind": {"group": "kafka.strimzi.io", "version": "v1",
                                                        "kind": obj["kind"]},
                                   "operation": "CREATE", "namespace": obj["metadata"]["namespace"],
                                   "name": obj["metadata"]["name"], "object": obj}}).encode()


def _governed_namespace(stack, name: str) -> None:
    core = client.CoreV1Api(stack.kube.client())
    labels = {"mm2gov.io/governed": "true"}
    try:
        core.create_namespace({"metadata": {"name": name, "labels": labels}})
    except ApiException:
        core.patch_namespace(name, {"metadata": {"labels": labels}})


def test_the_webhook_runs_from_the_prefix(prefix: Path, bare_env: dict[str, str], stack, tmp_path: Path) -> None:
    repo = tmp_path / "acme"
    shutil.copytree(REPO_ROOT / "examples" / "acme", repo)
    generated = run_cli("generate", str(repo), "--out", str(tmp_path / "out"))
    assert generated.returncode == 0, generated.stderr
    mm2 = yaml.safe_load((tmp_path / "out" / "strimzi" /
                          "kafkamirrormaker2_kafka-cloud_payments-onprem-to-cloud.yaml").read_text())
    everything = json.loads(json.dumps(mm2))
    everything["spec"]["mirrors"][0]["topicsPattern"] = ".*"
    _governed_namespace(stack, mm2["metadata"]["namespace"])
    pair = issue_cert(stack.ca, "mm2gov-admission", server=True, ip_addresses=("127.0.0.1",))
    write_private(tmp_path / "tls.crt", pair.cert_pem())
    write_private(tmp_path / "tls.key", pair.key_pem())
    kubeconfig = stack.write_kubeconfig(tmp_path / "kubeconfig")
    ca = str(stack.ca_pem_path)
    for _attempt in range(3):  # a free port can be taken between choosing and binding
        port = free_port()
        log = (tmp_path / "webhook.log").open("w")
        server = subprocess.Popen([str(prefix / "bin" / "mm2gov"), "admission", "serve", str(repo), "--tls-cert",
                                   str(tmp_path / "tls.crt"), "--tls-key", str(tmp_path / "tls.key"), "--port",
                                   str(port), "--kubeconfig", str(kubeconfig)],
                                  stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path, env=bare_env)
        try:
            deadline = time.monotonic() + 90
            while server.poll() is None and time.monotonic() < deadline:
                try:
                    connection = _https(port, ca)
                    connection.request("GET", "/readyz")
                    if connection.getresponse().status == 200:
                        break
                except OSError:
                    time.sleep(0.3)
            if server.poll() is not None and "address already in use" in (tmp_path / "webhook.log").read_text():
                continue
            assert server.poll() is None, (tmp_path / "webhook.log").read_text()
            verdicts = {}
            for uid, obj in (("generated", mm2), ("everything", everything)):
                connection = _https(port, ca)
                connection.request("POST", "/validate", body=_review(uid, obj),
                                   headers={"Content-Type": "application/json"})
                answer = connection.getresponse()
                assert answer.status == 200
                response = json.loads(answer.read())["response"]
                assert response["uid"] == uid
                verdicts[uid] = response
            assert verdicts["everything"]["allowed"] is False
            assert "admission_mm2_topics_outside_scope" in json.dumps(verdicts["everything"]["status"])
            assert verdicts["generated"]["allowed"] is True, verdicts["generated"]
            return
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
    pytest.fail("no free port for the webhook after 3 attempts")


@pytest.fixture(scope="module")
def prefix_audit(prefix: Path, bare_env: dict[str, str], stack, tmp_path_factory: pytest.TempPathFactory) -> \
        tuple[subprocess.CompletedProcess[str], Path]:
    """The prefix's `mm2gov audit` in local mode on the live stack, with LEAK planted (and removed after it): the
    record scan and RECORD_TENANT_MISMATCH among its checks, so that every part that could print runs."""
    root = tmp_path_factory.mktemp("image-audit")
    repo, store, out = root / "repo", root / "store", root / "out"
    write_stack_repo(stack, repo, ["img-a"])
    stack.export_secret_store(store)
    applied = run_cli("apply", str(repo), "--secrets-dir", str(store))
    assert applied.returncode == 0, applied.stderr
    source = admin_client(stack.kafka["source"].admin_config())
    create_acls(source, [LEAK])
    try:
        # Spark settings as a user sets them (docs/audit.md): the quick ones of the suite's own Spark JVMs
        done = in_prefix(prefix, {**bare_env, **submit_args({})}, root, "audit", str(repo), "--out", str(out),
                         "--secrets-dir", str(store), "--records-per-partition", "100", "--check", "ACL_WILDCARD",
                         "--check", "TOPIC_UNOWNED", "--check", "RECORD_TENANT_MISMATCH", timeout=900)
    finally:
        delete_acls(source, [LEAK])
    return done, out


def test_the_audit_runs_from_the_prefix_and_finds_a_planted_leak(prefix_audit) -> None:
    done, out = prefix_audit
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    document = json.loads((out / "audit.json").read_text())
    wildcard = [f for f in document["findings"] if f["check_id"] == "ACL_WILDCARD" and f["principal"] == LEAK.principal]
    assert [(f["cluster"], f["tenant"], f["resource_name"]) for f in wildcard] == [("source", "img-a", "*")]
    assert document["summary"]["status"] != "partial"


def test_the_audits_output_is_its_own_progress_lines(prefix_audit) -> None:
    """Local mode as its own process (the cluster-mode runs: test_audit_cluster.py): mm2gov's progress on stderr
    and its summary on stdout, no line of Spark's, py4j's or librdkafka's."""
    done, _ = prefix_audit
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert_only_the_audits_output(done.stderr, done.stdout, "local[2]")
