"""AdmissionReview parsing and the policy input: hostile bodies become BadReview, never an allow."""

from __future__ import annotations

import json

import pytest

from governance.admission.decider import parse_verdict
from governance.admission.review import BadReview, denial_message, parse_review, policy_input, response


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
    document = policy_input(request, {"mm2gov.io/tenant": "ignored-object-label-wins"})
    assert document["tenant"] == "payments" and document["kind"] == "KafkaMirrorMaker2"
    assert document["patterns"]["payments\\..*"]["alternatives"] == [{"literal_prefix": "payments.", "exact": False}]
    assert "error" in document["patterns"]["(bad"]


def test_tenant_comes_from_the_namespace_when_the_object_has_no_label():
    request = parse_review(review(object={"kind": "KafkaMirrorMaker2", "metadata": {"name": "f"}, "spec": {}}))
    assert policy_input(request, {"mm2gov.io/tenant": "risk"})["tenant"] == "risk"
    assert policy_input(request, {})["tenant"] == ""


def test_update_reports_the_old_tenant():
    old = {"kind": "KafkaMirrorMaker2", "metadata": {"name": "f", "labels": {"mm2gov.io/tenant": "marketing"}},
           "spec": {}}
    request = parse_review(review(operation="UPDATE", oldObject=old))
    document = policy_input(request, {})
    assert (document["tenant"], document["old_tenant"]) == ("payments", "marketing")


def test_a_secret_reaches_the_policy_without_its_values():
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "labels": {"mm2gov.io/tenant": "p"}},
              "type": "Opaque", "data": {"password": "c2VjcmV0LXZhbHVl"}, "stringData": {"x": "plain-secret"}}
    request = parse_review(review(kind={"group": "", "version": "v1", "kind": "Secret"}, object=secret))
    document = policy_input(request, {})
    assert document["object"]["keys"] == ["password", "x"]
    assert "c2VjcmV0LXZhbHVl" not in json.dumps(document) and "plain-secret" not in json.dumps(document)


@pytest.mark.parametrize("body, uid", [
    (b"", None), (b"{", None), (b"[]", None), (b"null", None),
    (json.dumps({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
                 "request": {"uid": "x"}}).encode(), "x"),
    (review(uid=7), None), (review(uid=""), None), (review(uid="u" * 500), None),
    (review(kind="KafkaUser"), "u-1"), (review(operation="PATCH"), "u-1"), (review(object="text"), "u-1"),
    (review(object=None), "u-1"), (review(namespace=["a"]), "u-1"),
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
