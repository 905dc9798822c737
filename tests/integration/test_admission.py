"""The admission webhook called by the real kube-apiserver: generated objects admitted, scope breaks
refused with the violation text, tenants taken from namespaces (watched) and never from objects,
routing and credential bypasses refused, OPA down denies, the repo reloads from disk (and a repo
with high violations is never enforced), and 10,000 hostile reviews produce no allow and no crash.

The webhook gets its own OPA (so the test can stop it) and is registered only for namespaces
labelled by this module; the registration is removed at the end.
"""

from __future__ import annotations

import http.client
import json
import random
import ssl
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from devstack.files import write_private
from devstack.opa import OpaServer
from devstack.process import free_port
from governance.secrets.pki import issue_cert
from tests.conftest import REPO_ROOT, run_cli
from tests.tools.capacity import CAPACITY_YAML, FLOW, PAYMENTS_CAPACITY, acme_with

GOVERNED = {"mm2gov.io/governed": "true"}
NAMESPACES = ("kafka-onprem", "kafka-cloud")  # the Strimzi namespaces of examples/acme: shared, no tenant label
TENANT_NAMESPACES = ("payments", "marketing", "risk")  # as k8s/tenant/rbac.yaml labels them
WEBHOOK = "strimzi.admission.mm2gov.io"  # k8s/admission/webhook.yaml's webhook for Strimzi's kinds


def _https(port: int, ca: str) -> http.client.HTTPSConnection:
    return http.client.HTTPSConnection("127.0.0.1", port, context=ssl.create_default_context(cafile=ca), timeout=10)


@pytest.fixture(scope="module")
def webhook(stack, tmp_path_factory):
    root = tmp_path_factory.mktemp("admission")
    # acme, payments' flow onprem -> cloud with capacity: its KafkaUser carries the quotas admission holds it to
    repo, out = acme_with(root, CAPACITY_YAML, PAYMENTS_CAPACITY), root / "out"
    generated = run_cli("generate", str(repo), "--out", str(out))
    assert generated.returncode == 0, generated.stderr
    pair = issue_cert(stack.ca, "mm2gov-admission", server=True, ip_addresses=("127.0.0.1",))
    write_private(root / "tls.crt", pair.cert_pem())
    write_private(root / "tls.key", pair.key_pem())
    opa = OpaServer(root, log_level="error")
    opa.start()
    port = free_port()
    kubeconfig = stack.write_kubeconfig(root / "kubeconfig")
    log = (root / "webhook.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "governance", "admission", "serve", str(repo), "--tls-cert", str(root / "tls.crt"),
         "--tls-key", str(root / "tls.key"), "--port", str(port), "--opa-url", opa.url, "--kubeconfig",
         str(kubeconfig), "--reload-interval", "0.5"], stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT)
    ca = str(stack.ca_pem_path)
    deadline = time.monotonic() + 60
    while True:
        try:
            connection = _https(port, ca)
            connection.request("GET", "/readyz")
            if connection.getresponse().status == 200:
                break
        except OSError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, (root / "webhook.log").read_text()
        time.sleep(0.3)
    api = stack.kube.client()
    core = client.CoreV1Api(api)
    for namespace in NAMESPACES:
        _namespace(core, namespace, GOVERNED)
    for tenant in TENANT_NAMESPACES:
        _namespace(core, tenant, {**GOVERNED, "mm2gov.io/tenant": tenant})
    config = yaml.safe_load((REPO_ROOT / "k8s" / "admission" / "webhook.yaml").read_text())
    config["metadata"] = {"name": "mm2gov-admission-test"}
    for hook in config["webhooks"]:
        hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}/validate",
                                "caBundle": __import__("base64").b64encode(stack.ca_pem_path.read_bytes()).decode()}
    admission = client.AdmissionregistrationV1Api(api)
    admission.create_validating_webhook_configuration(config)
    try:
        _until_enforced(api)
        yield {"repo": repo, "out": out, "api": api, "opa": opa, "port": port, "ca": ca, "process": process,
               "log": root / "webhook.log"}
    finally:
        admission.delete_validating_webhook_configuration("mm2gov-admission-test")
        process.terminate()
        process.wait(timeout=30)
        opa.stop()
        log.close()


def _until_enforced(api, timeout: float = 30) -> None:
    """The API server picks new webhook configurations up asynchronously: until a KafkaTopic outside its
    namespace's tenant is refused by the webhook, the registration is not in force (and a test that runs
    first, in any order, would be judged by no one). What got in meanwhile is deleted again."""
    topics = client.CustomObjectsApi(api)
    probe = {"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic",
             "metadata": {"name": "marketing.webhook-in-force", "namespace": "payments",
                          "labels": {"strimzi.io/cluster": "onprem"}}, "spec": {"topicName": "marketing.in-force"}}
    deadline = time.monotonic() + timeout
    while True:
        try:
            _create(api, probe)
        except ApiException as exc:
            if exc.status in (400, 403) and WEBHOOK in json.loads(exc.body)["message"]:
                return
            raise
        topics.delete_namespaced_custom_object("kafka.strimzi.io", "v1", "payments", "kafkatopics",
                                               probe["metadata"]["name"])
        assert time.monotonic() < deadline, "the API server never called the webhook"
        time.sleep(0.2)


def _namespace(core, name: str, labels: dict) -> None:
    try:
        core.create_namespace({"metadata": {"name": name, "labels": labels}})
    except ApiException:
        core.patch_namespace(name, {"metadata": {"labels": labels}})


def _create(api, obj: dict) -> dict:
    kind = obj["kind"]
    namespace = obj["metadata"]["namespace"]
    if kind == "Secret":
        return client.CoreV1Api(api).create_namespaced_secret(namespace, obj)
    plural = {"KafkaMirrorMaker2": "kafkamirrormaker2s", "KafkaUser": "kafkausers", "KafkaTopic": "kafkatopics"}[kind]
    return client.CustomObjectsApi(api).create_namespaced_custom_object("kafka.strimzi.io", "v1", namespace,
                                                                        plural, obj)


def _denial(api, obj: dict) -> str:
    with pytest.raises(ApiException) as refused:
        _create(api, obj)
    assert refused.value.status in (400, 403), refused.value.body
    return json.loads(refused.value.body)["message"]


def _generated(webhook, name: str) -> dict:
    text = (webhook["out"] / "strimzi" / name).read_text()
    return yaml.safe_load(text)


def test_objects_generated_for_acme_are_admitted(webhook):
    objects = [yaml.safe_load(p.read_text()) for p in sorted((webhook["out"] / "strimzi").glob("*.yaml"))]
    assert len(objects) > 20
    for obj in objects:
        created = _create(webhook["api"], obj)
        assert created["metadata"]["name"] == obj["metadata"]["name"]


def test_a_mirrormaker_mirroring_every_topic_is_refused_with_the_reason(webhook):
    mm2 = _generated(webhook, "kafkamirrormaker2_kafka-cloud_payments-onprem-to-cloud.yaml")
    mm2["metadata"].update(name="payments-everything", namespace="payments")
    mm2["spec"]["mirrors"][0]["topicsPattern"] = ".*"
    message = _denial(webhook["api"], mm2)
    assert f'admission webhook "{WEBHOOK}" denied the request' in message
    assert "admission_mm2_topics_outside_scope" in message and "payments" in message


def test_a_user_reading_another_tenants_prefix_is_refused(webhook):
    user = _generated(webhook, "kafkauser_kafka-cloud_payments-app.yaml")
    user["metadata"]["name"] = "payments-app"
    user["metadata"]["namespace"] = "kafka-onprem"
    user["metadata"]["labels"]["strimzi.io/cluster"] = "onprem"
    user["spec"]["authorization"]["acls"].append(
        {"resource": {"type": "topic", "name": "marketing.", "patternType": "prefix"}, "operations": ["Read"],
         "host": "*"})
    message = _denial(webhook["api"], user)
    assert "marketing." in message and "payments" in message


def test_a_sized_flows_mirrormaker_user_without_its_quota_is_refused(webhook):
    user = _generated(webhook, f"kafkauser_kafka-cloud_mm2-{FLOW}.yaml")
    assert user["spec"]["quotas"] == {"producerByteRate": 8333334}
    user["metadata"]["name"] = f"mm2-{FLOW}"
    for quotas in ({}, {"producerByteRate": 8333335}):
        user["spec"]["quotas"] = quotas
        message = _denial(webhook["api"], user)
        assert "admission_user_quota" in message and "producerByteRate 8333334" in message


def test_an_object_without_a_tenant_is_refused(webhook):
    """In a Strimzi namespace the repo names each object's owner; a topic no tenant owns has none,
    whatever its label says."""
    topic = _generated(webhook, "kafkatopic_kafka-cloud_onprem.payments.refunds.yaml")
    topic["metadata"]["name"] = "nobody-s-topic"
    topic["spec"]["topicName"] = "nobody.topic"
    assert "admission_tenant_missing" in _denial(webhook["api"], topic)


def test_the_repo_reloads_when_it_changes_on_disk(webhook):
    topic = _generated(webhook, "kafkatopic_kafka-cloud_onprem.payments.refunds.yaml")
    topic["metadata"]["name"] = "payments-eu-settlements"
    topic["spec"]["topicName"] = "payments-eu.settlements"
    assert "KafkaTopic payments-eu-settlements" in _denial(webhook["api"], topic)
    tenant = webhook["repo"] / "tenants" / "payments.yaml"
    good = tenant.read_text()
    tenant.write_text(good.replace('topic_prefixes: ["payments."]', 'topic_prefixes: ["payments.", "payments-eu."]'))
    try:
        assert "payments-eu." in tenant.read_text(), "the example tenant's prefixes changed: update this test"
        deadline = time.monotonic() + 20
        while True:
            try:
                _create(webhook["api"], topic)
                break
            except ApiException:
                assert time.monotonic() < deadline, "the webhook did not pick up the changed repo"
                time.sleep(0.5)
    finally:  # the example repo as it was, for the tests after this one (in any order)
        tenant.write_text(good)
    topic["metadata"]["name"] = "payments-eu-settlements-again"
    deadline = time.monotonic() + 20
    while True:  # and the webhook took the change back too
        try:
            _create(webhook["api"], topic)
        except ApiException as exc:
            assert f"KafkaTopic {topic['metadata']['name']}" in json.loads(exc.body)["message"]
            break
        assert time.monotonic() < deadline, "the webhook did not pick up the restored repo"
        topic["metadata"]["name"] = f"payments-eu-settlements-{time.monotonic_ns()}"
        time.sleep(0.5)


# ---- identity: the namespace's tenant, as the API server has it ---------------------------------

def test_a_label_cannot_move_an_object_to_another_tenant(webhook):
    """A KafkaMirrorMaker2 labelled payments in marketing's namespace is marketing's: refused."""
    mm2 = _generated(webhook, "kafkamirrormaker2_kafka-cloud_payments-onprem-to-cloud.yaml")
    mm2["metadata"].update(name="payments-in-marketing", namespace="marketing")
    message = _denial(webhook["api"], mm2)
    assert "admission_tenant_label_mismatch" in message and "belongs to tenant marketing" in message
    del mm2["metadata"]["labels"]["mm2gov.io/tenant"]  # without the label: judged as marketing's, and refused
    message = _denial(webhook["api"], mm2)
    assert "admission_mm2_topics_outside_scope" in message and "tenant marketing" in message
    user = _generated(webhook, "kafkauser_kafka-cloud_payments-app.yaml")
    user["metadata"]["namespace"] = "marketing"
    del user["metadata"]["labels"]["mm2gov.io/tenant"]
    assert "admission_user_unknown" in _denial(webhook["api"], user)


def test_namespace_labels_are_watched(webhook):
    """The tenant follows the namespace's label as it changes, without a restart or a TTL."""
    core = client.CoreV1Api(webhook["api"])
    _namespace(core, "relabelled", {**GOVERNED, "mm2gov.io/tenant": "marketing"})
    topic = {"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic",
             "metadata": {"name": "marketing.watched", "namespace": "relabelled",
                          "labels": {"strimzi.io/cluster": "onprem"}}, "spec": {"topicName": "marketing.watched"}}
    _create(webhook["api"], topic)
    core.patch_namespace("relabelled", {"metadata": {"labels": {"mm2gov.io/tenant": "payments"}}})
    topic["metadata"]["name"] = topic["spec"]["topicName"] = "marketing.watched-again"
    deadline = time.monotonic() + 10
    while True:  # the watch delivers the change within moments
        try:
            _create(webhook["api"], topic)
        except ApiException as exc:
            assert "outside tenant payments's topic names" in json.loads(exc.body)["message"]
            break
        assert time.monotonic() < deadline, "the namespace's new label never reached the webhook"
        topic["metadata"]["name"] = topic["spec"]["topicName"] = f"marketing.watched-{time.monotonic_ns()}"
        time.sleep(0.2)
    topic["metadata"]["name"] = topic["spec"]["topicName"] = "payments.watched"
    _create(webhook["api"], topic)
    core.delete_namespace("relabelled")


def test_an_unknown_namespace_is_denied(webhook):
    mm2 = _generated(webhook, "kafkamirrormaker2_kafka-cloud_payments-onprem-to-cloud.yaml")
    mm2["metadata"]["namespace"] = "no-such-namespace"
    body = review("nowhere", mm2, namespace="no-such-namespace")
    [(status, answer)] = _post(webhook["port"], webhook["ca"], [json.dumps(body).encode()])
    response = json.loads(answer)["response"]
    assert status == 200 and response["allowed"] is False
    assert "namespace 'no-such-namespace' is unknown" in response["status"]["message"]


# ---- where and as whom MirrorMaker 2 connects -------------------------------------------------------

def _payments_mm2(webhook, name: str) -> dict:
    mm2 = _generated(webhook, "kafkamirrormaker2_kafka-cloud_payments-onprem-to-cloud.yaml")
    mm2["metadata"].update(name=name, namespace="payments")
    return mm2


def test_a_mirrormaker_in_its_tenants_namespace_is_admitted(webhook):
    _create(webhook["api"], _payments_mm2(webhook, "payments-own"))


def test_foreign_bootstrap_servers_are_refused(webhook):
    mm2 = _payments_mm2(webhook, "payments-elsewhere")
    mm2["spec"]["target"]["bootstrapServers"] = "127.0.0.1:29093,attacker.example:9093"
    message = _denial(webhook["api"], mm2)
    assert "admission_mm2_bootstrap_servers" in message and "attacker.example:9093" in message


def test_client_overrides_are_refused(webhook):
    mm2 = _payments_mm2(webhook, "payments-overrides")
    mm2["spec"]["mirrors"][0]["sourceConnector"]["config"]["source.consumer.bootstrap.servers"] = "attacker:9093"
    mm2["spec"]["target"]["config"]["producer.override.sasl.jaas.config"] = "${secrets:payments/x:y}"
    message = _denial(webhook["api"], mm2)
    assert message.count("admission_mm2_config_key") == 2


def test_another_tenants_secret_in_a_pod_template_is_refused(webhook):
    mm2 = _payments_mm2(webhook, "payments-volumes")
    mm2["spec"]["template"] = {"pod": {"volumes": [
        {"name": "loot", "secret": {"secretName": "scram-onprem-mm2-marketing-onprem-to-cloud"}}]}}
    message = _denial(webhook["api"], mm2)
    assert "admission_mm2_foreign_secret" in message and "spec/template/pod/volumes/0/secret/secretName" in message


def test_another_users_password_for_a_kafka_user_is_refused(webhook):
    user = _generated(webhook, "kafkauser_kafka-cloud_payments-app.yaml")
    user["metadata"]["name"] = "payments-analytics"
    user["spec"]["authorization"]["acls"] = [{"resource": {"type": "group", "name": "payments-",
                                                           "patternType": "prefix"}, "operations": ["Read"]}]
    message = _denial(webhook["api"], user)  # payments-app's password Secret for payments-analytics
    assert "admission_user_secret" in message


def test_a_restricted_tenants_topic_on_a_cloud_cluster_is_refused(webhook):
    topic = _generated(webhook, "kafkatopic_kafka-cloud_onprem.payments.refunds.yaml")
    topic["metadata"]["name"] = topic["spec"]["topicName"] = "risk.exposures-copy"
    del topic["metadata"]["labels"]["mm2gov.io/tenant"]
    assert "admission_restricted_on_cloud" in _denial(webhook["api"], topic)


def test_a_secret_of_another_tenant_is_refused_in_a_tenants_namespace(webhook):
    document = __import__("tests.tools.acme_objects", fromlist=["x"]).repo_document(webhook["repo"])
    payments_secret = document["tenants"]["payments"]["names"]["principal_secrets"][0][0]
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
              "metadata": {"name": payments_secret, "namespace": "marketing",
                           "labels": {"app.kubernetes.io/managed-by": "mm2gov"}},
              "stringData": {"password": "x"}}
    message = _denial(webhook["api"], secret)
    assert "admission_secret_user_not_tenant" in message and "tenant payments" in message
    secret["metadata"]["namespace"] = "payments"
    _create(webhook["api"], secret)


# ---- a repo with high violations is never enforced -----------------------------------------------

def _get(webhook, path: str) -> tuple[int, str]:
    connection = _https(webhook["port"], webhook["ca"])
    connection.request("GET", path)
    answer = connection.getresponse()
    return answer.status, answer.read().decode()


def test_a_repo_with_high_violations_keeps_the_last_good_one(webhook):
    tenant = webhook["repo"] / "tenants" / "marketing.yaml"
    good = tenant.read_text()
    tenant.write_text(good.replace('topic_prefixes: ["marketing."]', 'topic_prefixes: ["marketing.", "payments."]'))
    assert "payments." in tenant.read_text(), "the example tenant's prefixes changed: update this test"
    try:
        deadline = time.monotonic() + 20
        while "refused" not in _get(webhook, "/readyz")[1]:
            assert time.monotonic() < deadline, "the webhook did not refuse the repo"
            time.sleep(0.3)
        status, text = _get(webhook, "/readyz")
        assert status == 200 and "prefix_overlap" in text and "last good one stays in force" in text
        assert "mm2gov_admission_repo_refused 1.0" in _get(webhook, "/metrics")[1]
        topic = {"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic",
                 "metadata": {"name": "payments.grab", "namespace": "marketing"}, "spec": {}}
        assert "outside tenant marketing's topic names" in _denial(webhook["api"], topic)
        assert "refused" in webhook["log"].read_text()
    finally:
        tenant.write_text(good)
    deadline = time.monotonic() + 20
    while _get(webhook, "/readyz")[1] != "ready\n":
        assert time.monotonic() < deadline, "the webhook did not take the repo back"
        time.sleep(0.3)
    assert "mm2gov_admission_repo_refused 0.0" in _get(webhook, "/metrics")[1]


def review(uid: str, obj: object, kind: str = "KafkaMirrorMaker2", **extra) -> dict:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"group": "kafka.strimzi.io", "version": "v1", "kind": kind},
                        "operation": "CREATE", "namespace": "kafka-cloud",
                        "name": name if isinstance(name, str) else "x", "object": obj, **extra}}


def hostile_bodies(base: dict, count: int, seed: int = 5) -> list[bytes]:
    """Malformed or hostile AdmissionReviews, every one built on a denied object or a broken envelope."""
    rng = random.Random(seed)
    denied = json.loads(json.dumps(base))
    denied["spec"]["mirrors"][0]["topicsPattern"] = ".*"
    valid = json.dumps(review("fuzz", denied)).encode()
    junk = ["", None, 7, -1.5, True, [], {}, "\u202e\u0000evil", "😀" * 50, "x" * 70_000, {"$ref": "#"}]
    bodies: list[bytes] = []
    for i in range(count):
        choice = i % 10
        if choice == 0:  # truncated JSON
            bodies.append(valid[: rng.randrange(1, len(valid) - 1)])
        elif choice == 1:  # wrong types at the envelope
            doc = review(rng.choice([None, 7, "", ["u"]]), denied)
            bodies.append(json.dumps(doc).encode())
        elif choice == 2:  # wrong types inside the object
            obj = json.loads(json.dumps(denied))
            path = rng.choice([("spec",), ("spec", "mirrors"), ("metadata",), ("metadata", "labels"),
                               ("spec", "target"), ("spec", "mirrors", 0)])
            cursor = obj
            for key in path[:-1]:
                cursor = cursor[key]
            cursor[path[-1]] = rng.choice(junk)
            bodies.append(json.dumps(review(f"u{i}", obj)).encode())
        elif choice == 3:  # huge strings
            obj = json.loads(json.dumps(denied))
            obj["metadata"]["name"] = "n" * rng.randrange(10_000, 400_000)
            obj["spec"]["mirrors"][0]["topicsPattern"] = "(" * rng.randrange(100, 5000) + ".*"
            bodies.append(json.dumps(review(f"u{i}", obj)).encode())
        elif choice == 4:  # unicode in names and labels
            obj = json.loads(json.dumps(denied))
            obj["metadata"]["name"] = "".join(chr(rng.randrange(0x80, 0x2FFFF)) for _ in range(40))
            obj["metadata"]["labels"]["mm2gov.io/tenant"] = rng.choice(["pаyments", "payments\u200b", "PAYMENTS"])
            bodies.append(json.dumps(review(f"u{i}", obj), ensure_ascii=rng.random() < 0.5).encode(
                "utf-8", "surrogatepass"))
        elif choice == 5:  # deep nesting (written as text: too deep for json.dumps)
            depth = rng.randrange(65, 20_000)
            opener, closer = ('{"a":', "}") if rng.random() < 0.5 else ("[", "]")
            obj = json.loads(json.dumps(denied))
            obj["spec"]["deep"] = "DEEP"
            text = json.dumps(review(f"u{i}", obj))
            bodies.append(text.replace('"DEEP"', opener * depth + "1" + closer * depth).encode())
        elif choice == 6:  # missing uid or request
            doc = review("x", denied)
            del doc["request"][rng.choice(["uid", "kind", "operation", "object"])]
            bodies.append(json.dumps(doc).encode())
        elif choice == 7:  # another tenant's label, hostile patterns
            obj = json.loads(json.dumps(denied))
            obj["spec"]["mirrors"][0]["topicsPattern"] = rng.choice(
                ["marketing\\..*", "payments\\..*|.*", "(?i)PAYMENTS\\..*,.*", "\\Qpayments.\\E.*", "[^x]*",
                 "payments\\.(?=x).*,payments.*", ""])
            bodies.append(json.dumps(review(f"u{i}", obj)).encode())
        elif choice == 8:  # random bytes
            bodies.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))))
        else:  # random kinds and operations on the denied object
            doc = review(f"u{i}", denied, kind=rng.choice(["KafkaUser", "KafkaTopic", "Secret", "kafkamirrormaker2"]),
                         operation=rng.choice(["CREATE", "UPDATE", "create", "PATCH"]))
            bodies.append(json.dumps(doc).encode())
    return bodies


def _post(port: int, ca: str, bodies: list[bytes]) -> list[tuple[int, bytes]]:
    answers = []
    connection = _https(port, ca)
    for body in bodies:
        try:
            connection.request("POST", "/validate", body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            answers.append((response.status, response.read()))
        except (OSError, http.client.HTTPException):
            connection.close()
            connection = _https(port, ca)
            answers.append((0, b""))
    connection.close()
    return answers


def test_ten_thousand_hostile_reviews_give_no_allow_and_no_crash(webhook):
    base = _generated(webhook, "kafkamirrormaker2_kafka-cloud_payments-onprem-to-cloud.yaml")
    bodies = hostile_bodies(base, 10_000)
    chunks = [bodies[i::8] for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = [a for part in pool.map(lambda c: _post(webhook["port"], webhook["ca"], c), chunks) for a in part]
    assert len(answers) == 10_000
    statuses = {status for status, _ in answers}
    assert statuses <= {200, 400}, statuses
    allowed = [json.loads(body)["response"]["uid"] for status, body in answers
               if status == 200 and json.loads(body)["response"]["allowed"]]
    assert allowed == [], [bodies[int(uid[1:])][:600] for uid in allowed[:5]]
    assert webhook["process"].poll() is None
    assert "Traceback" not in webhook["log"].read_text()
    # still serving: a good object is still admitted
    good = review("after-fuzz", base)
    [(status, body)] = _post(webhook["port"], webhook["ca"], [json.dumps(good).encode()])
    assert status == 200 and json.loads(body)["response"] == {"uid": "after-fuzz", "allowed": True}


def _counter(text: str, series: str) -> float:
    """A counter's value in a /metrics page (0 before its first increment: the series is not there yet)."""
    return next((float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(series + " ")), 0.0)


def test_metrics_count_decisions_by_result_and_rule(webhook):
    """One denial by the API server, counted once by result and once by rule (whatever ran before)."""
    denied = 'mm2gov_admission_decisions_total{kind="KafkaMirrorMaker2",result="denied"}'
    by_rule = 'mm2gov_admission_violations_total{rule="admission_mm2_topics_outside_scope"}'
    before = _get(webhook, "/metrics")[1]
    mm2 = _payments_mm2(webhook, "payments-counted")
    mm2["spec"]["mirrors"][0]["topicsPattern"] = ".*"
    assert "admission_mm2_topics_outside_scope" in _denial(webhook["api"], mm2)
    after = _get(webhook, "/metrics")[1]
    assert _counter(after, denied) == _counter(before, denied) + 1
    assert _counter(after, by_rule) == _counter(before, by_rule) + 1
    assert "mm2gov_admission_duration_seconds_bucket" in after


def test_with_opa_stopped_creation_is_denied_and_says_why(webhook):
    topic = _generated(webhook, "kafkatopic_kafka-cloud_onprem.payments.refunds.yaml")
    topic["metadata"]["name"] = "while-opa-is-down"
    topic["spec"]["topicName"] = "onprem.payments.while-down"
    webhook["opa"].stop()
    try:
        message = _denial(webhook["api"], topic)
        assert "policy engine (OPA) unreachable" in message and "fail closed" in message
    finally:
        webhook["opa"].start()
    deadline = time.monotonic() + 30  # OPA came back empty: the webhook uploads policies and repo again
    while True:
        try:
            _create(webhook["api"], topic)
            break
        except ApiException as exc:
            assert time.monotonic() < deadline, exc.body
            time.sleep(0.5)


def test_the_k8s_admission_base_is_accepted_by_the_api_server(stack):
    """Every manifest of k8s/admission (cert-manager component aside) passes the real API server's
    validation in a server-side dry run, and the webhook settings are the safe ones."""
    from kubernetes import dynamic

    api = dynamic.DynamicClient(stack.kube.client())
    kustomization = yaml.safe_load((REPO_ROOT / "k8s" / "admission" / "kustomization.yaml").read_text())
    documents = [doc for name in kustomization["resources"]
                 for doc in yaml.safe_load_all((REPO_ROOT / "k8s" / "admission" / name).read_text()) if doc]
    kinds = {doc["kind"] for doc in documents}
    assert kinds == {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment", "Service",
                     "PodDisruptionBudget", "ValidatingWebhookConfiguration"}
    try:  # namespaced objects are dry-run into a namespace that must exist
        client.CoreV1Api(stack.kube.client()).create_namespace({"metadata": {"name": kustomization["namespace"]}})
    except ApiException as exc:
        assert exc.status == 409
    for doc in documents:
        if doc["kind"] == "Namespace":  # it exists now: dry-run the same object under another name
            doc = {**doc, "metadata": {**doc["metadata"], "name": "mm2gov-dry-run"}}
        resource = api.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        namespace = doc["metadata"].get("namespace") or kustomization["namespace"]
        kwargs = {"namespace": namespace} if resource.namespaced else {}
        resource.create(body=doc, dry_run="All", **kwargs)
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert all(c["securityContext"]["readOnlyRootFilesystem"] for c in pod["containers"])
    for hook in next(d for d in documents if d["kind"] == "ValidatingWebhookConfiguration")["webhooks"]:
        assert (hook["failurePolicy"], hook["sideEffects"]) == ("Fail", "None") and hook["timeoutSeconds"] <= 10
        assert hook["namespaceSelector"] == {"matchLabels": GOVERNED}
