"""AdmissionReview parsing and the policy input: hostile bodies become BadReview, never an allow."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import pytest

from governance.admission.decider import parse_verdict
from governance.admission.envelope import MAX_NESTING, BadReview, _depth_ok, denial_message, parse_review, response
from governance.admission.facts import MAX_ITEMS, policy_input
from governance.admission.ownership import TenantIndex
from governance.config.schema import Cluster
from governance.model import names
from tests.tools import scopes


def review(**request) -> bytes:
    base = {"uid": "u-1", "kind": {"group": "kafka.strimzi.io", "version": "v1", "kind": "KafkaMirrorMaker2"},
            "operation": "CREATE", "namespace": "kafka-cloud", "name": "f",
            "object": {"kind": "KafkaMirrorMaker2",
                       "metadata": {"name": "f", "labels": {"mm2gov.io/tenant": "payments"}},
                       "spec": {"mirrors": [{"topicsPattern": "payments\\..*, (bad", "groupsPattern": "payments-.*"}]}}}
    base.update(request)
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": base}).encode()


def test_a_well_formed_review_gives_the_policy_input_with_regex_facts():
    request = parse_review(review())
    document = policy_input(request, {"mm2gov.io/tenant": "payments"})
    assert document["tenant"] == "payments" and document["kind"] == "KafkaMirrorMaker2"
    assert document["tenant_from"] == "namespace"
    assert document["patterns"]["payments\\..*"]["alternatives"] == [{"literal_prefix": "payments.", "exact": False}]
    assert "error" in document["patterns"]["(bad"]
    assert document["mirror_patterns"] == [{"topicsPattern": ["payments\\..*", "(bad"],
                                            "groupsPattern": ["payments-.*"]}]


def test_the_tenant_is_the_namespaces_never_the_objects_label():
    request = parse_review(review())  # the object says payments
    assert policy_input(request, {"mm2gov.io/tenant": "marketing"})["tenant"] == "marketing"
    assert policy_input(request, {})["tenant"] == ""
    assert policy_input(request, {"mm2gov.io/tenant": ""})["tenant"] == ""


def test_update_reports_the_old_tenant():
    old = {"kind": "KafkaMirrorMaker2", "metadata": {"name": "f", "labels": {"mm2gov.io/tenant": "marketing"}},
           "spec": {}}
    request = parse_review(review(operation="UPDATE", oldObject=old))
    document = policy_input(request, {"mm2gov.io/tenant": "risk"})
    assert (document["tenant"], document["old_tenant"]) == ("risk", "risk")


def test_a_secret_reaches_the_policy_without_its_values():
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "f", "labels": {"mm2gov.io/tenant": "p"}},
              "type": "Opaque", "data": {"password": "c2VjcmV0LXZhbHVl"}, "stringData": {"x": "plain-secret"}}
    request = parse_review(review(kind={"group": "", "version": "v1", "kind": "Secret"}, object=secret))
    document = policy_input(request, {})
    assert document["object"]["keys"] == ["password", "x"]
    assert "c2VjcmV0LXZhbHVl" not in json.dumps(document) and "plain-secret" not in json.dumps(document)


# ---- the tenant in a Strimzi namespace: the repo's owner of what the object is --------------------

def _cluster(alias: str, strimzi: bool) -> Cluster:
    return Cluster.model_validate({
        "bootstrap_servers": f"{alias}:9093", "zone": alias,
        "security": {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "ca_secret": f"{alias}-ca"},
        **({"strimzi": {"namespace": f"kafka-{alias}", "cluster": alias}} if strimzi else {})})


CLUSTERS = {"cloud": _cluster("cloud", strimzi=True), "onprem": _cluster("onprem", strimzi=False)}
TENANCY = scopes.tenancy(
    scopes.tenant_scope("payments", flows=[scopes.flow_scope("payments", "onprem", "cloud")]),
    scopes.tenant_scope("marketing", ["marketing.", "shared."]),
    scopes.tenant_scope("copycat", ["shared."], principals=[]),
)
FLOW = names.flow_id("payments", "onprem", "cloud")


@pytest.mark.parametrize("kind, name, spec, owner", [
    ("KafkaMirrorMaker2", FLOW, {}, "payments"),
    ("KafkaMirrorMaker2", "payments-everything", {}, ""),
    ("KafkaUser", "payments-app", {}, "payments"),
    ("KafkaUser", names.mm2_user(FLOW), {}, "payments"),
    ("KafkaUser", "nobody", {}, ""),
    ("KafkaTopic", "x", {"topicName": "onprem.payments.orders"}, "payments"),
    ("KafkaTopic", "marketing.leads", {}, "marketing"),
    ("KafkaTopic", names.mm2_internal_prefix(FLOW) + "configs", {"topicName": ""}, "payments"),
    ("KafkaTopic", "shared.x", {}, ""),  # two tenants claim the prefix: neither owns it
    ("KafkaTopic", "payments", {}, ""),
    ("Secret", names.scram_secret("cloud", "User:payments-app"), {}, "payments"),
    ("Secret", names.tls_secret("onprem", "User:marketing-app"), {}, "marketing"),
    ("Secret", names.scram_secret("cloud", names.mm2_principal(FLOW)), {}, "payments"),
    ("Secret", "cloud-cluster-ca", {}, ""),
])
def test_owner_in_a_strimzi_namespace(kind, name, spec, owner):
    index = TenantIndex.of(TENANCY, CLUSTERS)
    obj = {"kind": kind, "metadata": {"name": name, "labels": {"mm2gov.io/tenant": "marketing"}}, "spec": spec}
    request = parse_review(review(kind={"group": "", "version": "v1", "kind": kind}, name=name, object=obj))
    document = policy_input(request, {}, index)
    assert (document["tenant"], document["tenant_from"]) == (owner, "owner" if owner else "")
    # only a Strimzi namespace of clusters.yaml; a tenant label on the namespace always wins
    assert policy_input({**request, "namespace": "elsewhere"}, {}, index)["tenant"] == ""
    assert policy_input(request, {"mm2gov.io/tenant": "risk"}, index)["tenant"] == "risk"


# ---- facts: LIST items, bootstrap servers, Secret references ------------------------------------

def test_pattern_items_per_mirror_and_field_as_kafka_splits_them():
    mirrors = [{"topicsPattern": " a\\..* ,\tb\\..*,,c ", "groupsExcludePattern": "x-.*", "groupsPattern": 7},
               "not a mirror", {"topicsPattern": ""}]
    request = parse_review(review(object={"kind": "KafkaMirrorMaker2", "metadata": {}, "spec": {"mirrors": mirrors}}))
    document = policy_input(request, {})
    assert document["mirror_patterns"] == [{"topicsPattern": ["a\\..*", "b\\..*", "", "c"],
                                            "groupsExcludePattern": ["x-.*"]}, None, {"topicsPattern": []}]
    assert set(document["patterns"]) == {"a\\..*", "b\\..*", "", "c", "x-.*"}
    assert "empty item" in document["patterns"][""]["error"]  # Kafka 4 refuses the list, so does mm2gov


def test_too_many_items_are_refused_by_an_item_without_facts():
    mirrors = [{"topicsPattern": ",".join(f"payments\\.t{i}" for i in range(1000))}]
    request = parse_review(review(object={"kind": "KafkaMirrorMaker2", "metadata": {}, "spec": {"mirrors": mirrors}}))
    document = policy_input(request, {})
    items = document["mirror_patterns"][0]["topicsPattern"]
    assert len(items) == MAX_ITEMS + 1 and "error" in document["patterns"][items[-1]]


def test_bootstrap_servers_of_every_connection():
    spec = {"target": {"bootstrapServers": "Cloud:9093, cloud-b:9093"},
            "mirrors": [{"source": {"bootstrapServers": 7}}],
            "clusters": [{"alias": "x", "bootstrapServers": "X:1"}, "junk"]}
    request = parse_review(review(object={"kind": "KafkaMirrorMaker2", "metadata": {}, "spec": spec}))
    assert policy_input(request, {})["bootstrap_servers"] == {
        "spec/target/bootstrapServers": ["cloud:9093", "cloud-b:9093"],
        "spec/mirrors/0/source/bootstrapServers": [], "spec/clusters/0/bootstrapServers": ["x:1"]}


def test_every_secret_reference_is_found():
    spec = {
        "target": {"authentication": {"passwordSecret": {"secretName": "a"}, "certificateAndKey": {"secretName": 5}},
                   "tls": {"trustedCertificates": [{"secretName": "ca"}, {"pattern": "*"}]}},
        "template": {"pod": {"volumes": [{"secret": {"secretName": "v"}},
                                         {"projected": {"sources": [{"secret": {"name": "p"}}]}},
                                         {"csi": {"nodePublishSecretRef": {"name": "c"}}}]},
                     "connectContainer": {"env": [{"valueFrom": {"secretKeyRef": {"name": "e"}}}],
                                          "envFrom": [{"secretRef": {"name": "f"}}]}},
        "labels/odd~": {"secretName": "o"},
    }
    request = parse_review(review(object={"kind": "KafkaMirrorMaker2", "metadata": {}, "spec": spec}))
    refs = {(path, name, how) for path, name, how in policy_input(request, {})["secret_refs"]}
    assert refs == {
        ("spec/target/authentication/passwordSecret/secretName", "a", "secretName"),
        ("spec/target/authentication/certificateAndKey/secretName", "", "secretName"),
        ("spec/target/tls/trustedCertificates/0/secretName", "ca", "secretName"),
        ("spec/target/tls/trustedCertificates/1/pattern", "*", "pattern"),
        ("spec/template/pod/volumes/0/secret/secretName", "v", "secretName"),
        ("spec/template/pod/volumes/1/projected/sources/0/secret/name", "p", "secret"),
        ("spec/template/pod/volumes/2/csi/nodePublishSecretRef/name", "c", "nodePublishSecretRef"),
        ("spec/template/connectContainer/env/0/valueFrom/secretKeyRef/name", "e", "secretKeyRef"),
        ("spec/template/connectContainer/envFrom/0/secretRef/name", "f", "secretRef"),
        ("spec/labels~1odd~0/secretName", "o", "secretName"),
    }


def test_a_kafka_user_sends_its_secret_references_and_no_mirror_facts():
    user = {"kind": "KafkaUser", "metadata": {"name": "f"}, "spec": {"authentication": {
        "type": "scram-sha-512", "password": {"valueFrom": {"secretKeyRef": {"name": "s", "key": "password"}}}}}}
    document = policy_input(parse_review(review(kind={"kind": "KafkaUser"}, object=user)), {})
    assert document["secret_refs"] == [["spec/authentication/password/valueFrom/secretKeyRef/name", "s",
                                        "secretKeyRef"]]
    assert (document["patterns"], document["mirror_patterns"], document["bootstrap_servers"]) == ({}, [], {})


def test_duplicate_keys_are_refused_with_the_uid():
    body = review().replace(b'"name": "f"', b'"name": "f", "name": "f"', 1)
    with pytest.raises(BadReview, match="duplicate key") as refused:
        parse_review(body)
    assert refused.value.uid == "u-1"
    hidden = review().replace(b'"topicsPattern"', b'"topicsPattern": ".*", "topicsPattern"', 1)
    with pytest.raises(BadReview, match="duplicate key"):
        parse_review(hidden)


@pytest.mark.parametrize("metadata", [{"name": "other"}, {"namespace": "kafka-onprem"}, {"namespace": 3}])
def test_an_object_that_contradicts_the_request_is_refused(metadata):
    obj = {"kind": "KafkaMirrorMaker2", "metadata": {"name": "f", **metadata}, "spec": {}}
    with pytest.raises(BadReview, match="does not match"):
        parse_review(review(object=obj))


@pytest.mark.parametrize("body, uid", [
    (b"", None), (b"{", None), (b"[]", None), (b"null", None),
    (json.dumps({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
                 "request": {"uid": "x"}}).encode(), "x"),
    (review(uid=7), None), (review(uid=""), None), (review(uid="u" * 500), None),
    (review(kind="KafkaUser"), "u-1"), (review(operation="PATCH"), "u-1"), (review(object="text"), "u-1"),
    (review(object=None), "u-1"), (review(namespace=["a"]), "u-1"),
    (review(object={"kind": "KafkaMirrorMaker2", "metadata": "x"}), "u-1"),
    (review(kind={"kind": "ConfigMap"}), "u-1"), (review(kind={"kind": "KafkaUser"}), "u-1"),
    (b"[" * 100_000 + b"]" * 100_000, None), (b'{"a":' * 5000 + b"1" + b"}" * 5000, None),
])
def test_malformed_reviews_are_refused_with_the_uid_when_readable(body, uid):
    with pytest.raises(BadReview) as refused:
        parse_review(body)
    assert refused.value.uid == uid


def test_oversized_body_is_refused_before_parsing():
    with pytest.raises(BadReview, match="over"):
        parse_review(b" " * (3 * 1024 * 1024 + 1))


@pytest.mark.parametrize("body", [
    b"", b"not json", b'{"result": null}', b'{"result": {"allowed": "yes", "violations": []}}',
    b'{"result": {"allowed": true}}', b'{"result": {"allowed": true, "violations": ["x"]}}',
    b'{"result": {"allowed": false, "violations": []}}', b"{}",
])
def test_anything_but_a_clean_decision_denies(body):
    assert parse_verdict(body).allowed is False


def test_a_clean_decision_allows_and_a_denial_lists_every_violation():
    assert parse_verdict(b'{"result": {"allowed": true, "violations": []}}').allowed is True
    verdict = parse_verdict(json.dumps({"result": {"allowed": False, "violations": [
        {"rule": "a", "message": "first"}, {"rule": "b", "message": "second"}]}}).encode())
    assert not verdict.allowed
    message = denial_message(list(verdict.violations))
    assert "[a] first" in message and "[b] second" in message
    answer = response("u-9", False, message)["response"]
    assert answer["uid"] == "u-9" and answer["status"]["code"] == 403


def _nested(depth: int) -> object:
    value: object = 1
    for level in range(depth - 1):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [1, 2, MAX_NESTING - 1, MAX_NESTING])
def test_nesting_up_to_the_limit_passes(depth):
    assert _depth_ok(_nested(depth)) and _depth_ok([[], {}, _nested(depth - 1) if depth > 1 else 1])


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, MAX_NESTING + 2, 500])
def test_nesting_beyond_the_limit_fails(depth):
    assert not _depth_ok(_nested(depth)) and not _depth_ok({"a": 1, "b": [_nested(depth - 1)]})


# ---- the decider: namespaces and the repo gate -------------------------------------------------

class RoutingOpa:
    """A loopback OPA stand-in: data documents by PUT/PATCH/GET/DELETE, decisions from callables."""

    def __init__(self, repo_violations: list[dict]) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.data: dict[str, bytes] = {}
        self.repo_violations = repo_violations
        self.on_patch: Callable[[], None] = lambda: None  # called while a JSON Patch is being applied
        self.inputs: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _answer(self, status: int, body: bytes = b"") -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def do_PUT(self) -> None:
                fake.data[self.path] = self._body()
                self._answer(204)

            def do_PATCH(self) -> None:  # a JSON Patch of data/: every operation or none, as OPA applies it
                fake.on_patch()
                fake.data.update({self.path + op["path"]: json.dumps(op["value"]).encode()
                                  for op in json.loads(self._body())})
                self._answer(204)

            def do_DELETE(self) -> None:
                self._body()
                fake.data.pop(self.path, None)
                self._answer(204)

            def do_GET(self) -> None:
                if self.path == "/v1/data/mm2gov_repo/clusters" and "/v1/data/mm2gov_repo" in fake.data:
                    self._answer(200, b'{"result": {}}')
                else:
                    self._answer(200, b"{}")

            def do_POST(self) -> None:
                document = json.loads(self._body())
                if self.path == "/v1/data/mm2gov/decision":
                    self._answer(200, json.dumps({"result": {"scopes": {}, "violations": fake.repo_violations}})
                                 .encode())
                else:
                    fake.inputs.append(document["input"])
                    self._answer(200, b'{"result": {"allowed": true, "violations": []}}')

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def acme_copy(tmp_path):
    import shutil

    from tests.conftest import REPO_ROOT

    shutil.copytree(REPO_ROOT / "examples" / "acme", tmp_path / "acme")
    return tmp_path / "acme"


def _kafka_topic(namespace: str = "payments") -> dict:
    obj = {"kind": "KafkaTopic", "metadata": {"name": "payments.orders", "namespace": namespace}, "spec": {}}
    return parse_review(review(kind={"kind": "KafkaTopic"}, namespace=namespace, name="payments.orders", object=obj))


def test_unknown_namespaces_and_an_unfilled_cache_deny(acme_copy):
    from governance.admission.decider import AdmissionDecider
    from tests.tools.namespaces import StaticNamespaces

    opa = RoutingOpa([])
    decider = AdmissionDecider(acme_copy, opa.url, StaticNamespaces({"payments": {"mm2gov.io/tenant": "payments"}}))
    assert decider.sync.load() and decider.readiness() == (True, "ready\n")
    assert decider.decide(_kafka_topic()).allowed
    assert opa.inputs[-1]["tenant"] == "payments"
    unknown = decider.decide(_kafka_topic("nowhere"))
    assert not unknown.allowed and "namespace 'nowhere' is unknown" in unknown.reason
    decider.namespaces.ready = lambda: False  # type: ignore[method-assign]
    assert "not filled yet" in decider.decide(_kafka_topic()).reason
    assert decider.readiness()[0] is False
    blind = AdmissionDecider(acme_copy, opa.url, None)
    blind.sync.load()
    assert "no namespace source" in blind.decide(_kafka_topic()).reason
    assert blind.readiness() == (False, "not ready: no namespace source (--kubeconfig or --in-cluster): every review "
                                        "is denied\n")


def test_with_opa_gone_a_review_is_denied_with_the_cause_and_never_opas_address(acme_copy):
    from governance.admission.decider import AdmissionDecider
    from tests.tools.namespaces import StaticNamespaces

    opa = RoutingOpa([])
    decider = AdmissionDecider(acme_copy, opa.url, StaticNamespaces({"payments": {"mm2gov.io/tenant": "payments"}}))
    assert decider.sync.load() and decider.decide(_kafka_topic()).allowed
    opa.server.shutdown()
    opa.server.server_close()  # nothing listens any more; the kept connection's thread would still answer:
    decider.opa.close()  # the next review connects anew
    verdict = decider.decide(_kafka_topic())
    assert not verdict.allowed and "127.0.0.1" not in verdict.reason, verdict
    assert verdict.reason == ("mm2gov admission: policy engine (OPA) unreachable (ConnectionRefusedError); denied "
                              "(fail closed)")


def test_after_an_opa_restart_reviews_are_denied_until_policies_repo_and_scopes_are_all_back(acme_copy):
    """A stand-in OPA, for a fault the real one cannot be made to show on cue: a review arriving while the webhook
    puts an OPA that restarted back together, policy modules one at a time, then the repo and its scopes. Judged
    by some of the modules without the repo's data, it was allowed (make test-random: an MM2 moved into another
    tenant's namespace was admitted). Here the upload callback asks for a verdict in the middle: denied, no repo
    loaded; once everything is back, allowed again."""
    from governance.admission.decider import AdmissionDecider
    from tests.tools.namespaces import StaticNamespaces

    opa = RoutingOpa([])
    during = []
    decider = AdmissionDecider(acme_copy, opa.url, StaticNamespaces({"payments": {"mm2gov.io/tenant": "payments"}}),
                               upload_policies=lambda: during.append(decider.decide(_kafka_topic())))
    assert decider.sync.load() and decider.decide(_kafka_topic()).allowed
    assert during == []  # the first push uploads no policies: the server did
    opa.data.clear()  # OPA restarted: its data (and policies) are gone
    assert decider.sync.load()
    [verdict] = during
    assert not verdict.allowed and "no governance repo is loaded" in verdict.reason
    assert decider.decide(_kafka_topic()).allowed and decider.readiness() == (True, "ready\n")


def test_a_review_during_a_repo_swap_is_judged_again_by_the_new_repo_not_denied(acme_copy):
    """A stand-in OPA again (the real one applies a patch in microseconds; no review lands inside it on cue): a
    review asks OPA while the webhook's JSON Patch of a newer repo is under way. Its first answer could come
    from the old repo's data with the new repo's tenant index, or the other way round: the webhook does not use
    it, asks again once the swap is over, and admits; no review is denied because a repo is being replaced."""
    from concurrent.futures import ThreadPoolExecutor

    from governance.admission.decider import AdmissionDecider
    from tests.tools.namespaces import StaticNamespaces

    opa = RoutingOpa([])
    decider = AdmissionDecider(acme_copy, opa.url, StaticNamespaces({"payments": {"mm2gov.io/tenant": "payments"}}))
    assert decider.sync.load() and decider.decide(_kafka_topic()).allowed
    asked = len(opa.inputs)
    reviews = []

    def review_meanwhile() -> None:
        reviews.append(pool.submit(decider.decide, _kafka_topic()))
        deadline = time.monotonic() + 10
        while len(opa.inputs) == asked and time.monotonic() < deadline:  # it asked OPA during the swap
            time.sleep(0.01)

    tenant = acme_copy / "tenants" / "payments.yaml"
    tenant.write_text(tenant.read_text() + "\n")
    with ThreadPoolExecutor(1) as pool:
        opa.on_patch = review_meanwhile
        assert decider.sync.load()
        [review] = reviews
        verdict = review.result(timeout=10)
    assert verdict.allowed, verdict
    assert len(opa.inputs) - asked == 2  # the answer given during the swap, then the one it used
    assert decider.sync.state.adopted == 2 and decider.readiness() == (True, "ready\n")


def test_a_repo_with_high_violations_is_never_enforced(acme_copy):
    from governance.admission.decider import AdmissionDecider
    from tests.tools.namespaces import StaticNamespaces

    opa = RoutingOpa([{"rule": "prefix_overlap", "severity": "high"}, {"rule": "owner_domain", "severity": "medium"}])
    decider = AdmissionDecider(acme_copy, opa.url, StaticNamespaces({"payments": {"mm2gov.io/tenant": "payments"}}))
    assert not decider.sync.load()
    ready, text = decider.readiness()
    assert not ready and "no good governance repo was ever loaded" in text and "prefix_overlap" in text
    assert "/v1/data/mm2gov_repo" not in opa.data
    denied = decider.decide(_kafka_topic())
    assert not denied.allowed and "1 high or critical violation(s): prefix_overlap" in denied.reason
    opa.repo_violations = [{"rule": "owner_domain", "severity": "medium"}]  # fixed: only a medium one left
    tenant = acme_copy / "tenants" / "payments.yaml"
    tenant.write_text(tenant.read_text() + "\n")
    assert decider.sync.load() and decider.readiness() == (True, "ready\n")
    assert b'"payments"' in opa.data["/v1/data/mm2gov_repo"]
    assert decider.sync.state.adopted == 1 and decider.sync.state.refusals == 1
    # a newer repo with a critical violation: the last good one stays, and /readyz says so
    opa.repo_violations = [{"rule": "principal_wildcard", "severity": "critical"}]
    tenant.write_text(tenant.read_text().replace("payments-platform@acme.example", "payments-team@acme.example"))
    pushed = opa.data["/v1/data/mm2gov_repo"]
    assert decider.sync.load()
    assert opa.data["/v1/data/mm2gov_repo"] == pushed
    ready, text = decider.readiness()
    assert ready and "the newer governance repo on disk is refused" in text and "principal_wildcard" in text
    assert decider.decide(_kafka_topic()).allowed
    # a repo that does not load at all is refused the same way
    tenant.write_text("name: [unclosed")
    decider.sync.load()
    assert "does not load" in decider.sync.state.refused and decider.sync.state.refusals == 3


def test_metrics_report_the_repo_and_the_namespace_cache(acme_copy):
    from prometheus_client import generate_latest

    from governance.admission.decider import AdmissionDecider
    from governance.admission.server import Metrics
    from tests.tools.namespaces import StaticNamespaces

    opa = RoutingOpa([{"rule": "prefix_overlap", "severity": "high"}])
    decider = AdmissionDecider(acme_copy, opa.url, StaticNamespaces({"payments": {}}))
    decider.sync.load()
    text = generate_latest(Metrics(decider).registry).decode()
    for line in ("mm2gov_admission_repo_in_force 0.0", "mm2gov_admission_repo_refused 1.0",
                 "mm2gov_admission_repo_refusals_total 1.0", "mm2gov_admission_namespace_cache_ready 1.0",
                 "mm2gov_admission_namespaces 1.0"):
        assert line in text, text


class FakeCore:
    """list_namespace / read_namespace of a CoreV1Api, from a dict; counts the LISTs."""

    def __init__(self, namespaces: dict[str, dict]) -> None:
        self.namespaces = namespaces
        self.lists = 0

    def list_namespace(self, **_: object):
        self.lists += 1
        items = [{"metadata": {"name": name, "labels": labels}} for name, labels in self.namespaces.items()]
        return type("Answer", (), {"data": json.dumps({"metadata": {"resourceVersion": str(self.lists)},
                                                       "items": items}).encode()})()

    def read_namespace(self, name: str, **_: object):
        from kubernetes.client.exceptions import ApiException

        if name not in self.namespaces:
            raise ApiException(status=404)
        return type("Answer", (), {"data": json.dumps({"metadata": {"name": name,
                                                                    "labels": self.namespaces[name]}}).encode()})()


def test_namespace_watch_lists_again_after_an_expired_or_failed_watch():
    from kubernetes.client.exceptions import ApiException

    from governance.admission.namespaces import NamespaceWatch

    watch = NamespaceWatch(None, max_backoff=0.01)
    core = watch.core = FakeCore({"payments": {"mm2gov.io/tenant": "payments"}})  # type: ignore[assignment]
    assert not watch.ready() and watch.lookup("payments") is None  # nothing before the first list
    failures = [ApiException(status=410), OSError("reset"), ApiException(status=500)]

    def stream() -> None:
        if failures:
            raise failures.pop(0)
        core.namespaces["late"] = {}
        watch.stop()

    watch._stream = stream  # type: ignore[method-assign]
    watch._run()
    assert core.lists == 4 and watch.restarts == 3 and watch.ready()
    assert watch.lookup("payments") == {"mm2gov.io/tenant": "payments"}
    assert watch.resource_version == "4"
    # a namespace the cache has not seen yet is read once, then cached; an absent one is unknown
    assert watch.lookup("late") == {} and watch.misses == 1 and watch.lookup("late") == {} and watch.misses == 1
    assert watch.lookup("absent") is None and watch.lookup("") is None


@pytest.mark.parametrize(("version", "ok"), [("4.1.0", True), ("3.9.1", True), ("3.1.0", True), ("10.0", True),
                                             ("3.0.2", False), ("2.8.1", False), ("latest", False), ("4", False),
                                             (4.1, False), ("", False)])
def test_the_mirror_maker_version_is_judged_against_the_per_flow_policys_oldest(version, ok):
    from governance.kafka.version import mm2_version_ok

    assert mm2_version_ok(version) is ok
