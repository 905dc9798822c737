"""The CLI's renderers (governance/render/, and devstack/render.py for `mm2gov devstack`): exact text and JSON,
as `mm2gov` prints them."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from devstack import render as stack
from governance.importer import Imported
from governance.k8s.strimzi_apply import KubeChanges
from governance.kafka.reconcile import ClusterChanges
from governance.model.acl import AclBinding
from governance.policy.engine import Violation
from governance.render import changes, importer, secrets
from governance.render import violations as render_violations
from governance.secrets.expiry import CertStatus
from governance.secrets.issue import Issued
from governance.secrets.rotate import Rotation
from tests.conftest import run_cli

READ = AclBinding("User:app", "TOPIC", "payments.", "PREFIXED", "READ")
OLD = AclBinding("User:app", "GROUP", "payments-old", "LITERAL", "READ")
FOREIGN = AclBinding("User:x", "TOPIC", "x.", "PREFIXED", "WRITE", "DENY")


def _onprem() -> ClusterChanges:
    return ClusterChanges("onprem", delete_acls=[OLD], create_acls=[READ], delete_users=["User:gone"],
                          create_users=["User:app"], create_topics=[("onprem.payments.orders", 3)], foreign=[FOREIGN])


def test_changes_text_lists_each_change_under_its_cluster_kubernetes_first():
    kube = KubeChanges(created=["KafkaUser/ns/a"], updated=["KafkaTopic/ns/t"], deleted=["KafkaUser/ns/old"])
    assert changes.text([_onprem(), ClusterChanges("cloud")], "applied", kube) == (
        "kubernetes: 3 change(s) applied\n"
        "  + KafkaUser/ns/a\n"
        "  ~ KafkaTopic/ns/t\n"
        "  - KafkaUser/ns/old\n"
        "onprem: 5 change(s) applied\n"
        "  - ACL User:app READ GROUP LITERAL payments-old\n"
        "  - SCRAM user User:gone\n"
        "  + SCRAM user User:app\n"
        "  + topic onprem.payments.orders (3 partitions, as its source topic)\n"
        "  + ACL User:app READ TOPIC PREFIXED payments.\n"
        "  ! foreign ACL left alone: User:x DENY WRITE TOPIC PREFIXED x.\n"
        "cloud: 0 change(s) applied\n")
    assert changes.text([], "applied") == ""  # nothing to say: not even an empty line


def test_changes_json_counts_kafka_and_kubernetes_changes():
    kube = KubeChanges(created=["KafkaUser/ns/a"])
    document = json.loads(changes.as_json([_onprem()], kube))
    assert document["changes"] == 6 and document["kubernetes"] == kube.to_record()
    assert document["clusters"] == [_onprem().to_record()]
    assert "kubernetes" not in json.loads(changes.as_json([_onprem()]))
    assert changes.as_json([]) == '{\n  "clusters": [],\n  "changes": 0\n}\n'


def test_drift_lists_changes_then_the_certificates_that_need_attention():
    certificates = [CertStatus("ca-onprem", "ca.crt", "ok", "2031-01-01", 900),
                    CertStatus("tls-onprem-app", "user.crt", "expiring", "2026-01-10", 9),
                    CertStatus("tls-cloud-app", "user.crt", "missing")]
    assert changes.drift_text([ClusterChanges("onprem", create_users=["User:app"])], certificates) == (
        "onprem: 1 change(s) of drift\n"
        "  + SCRAM user User:app\n"
        "certificates: 3 checked, 2 need attention\n"
        "  ! expiring tls-onprem-app/user.crt, not after 2026-01-10 (9 days)\n"
        "  ! missing tls-cloud-app/user.crt\n")
    document = json.loads(changes.drift_json([], certificates))
    assert document == {"clusters": [], "changes": 0, "certificates": [c.to_record() for c in certificates]}


def test_issued_and_rotated_secrets_are_named_never_shown():
    ca = Issued("ca-onprem", "ca", "ab" * 32, "2031-02-03T00:00:00Z")
    scram = Issued("scram-onprem-app", "scram", generation=2)
    assert secrets.issued_text([ca, scram], "/etc/s") == (
        "+ ca    ca-onprem  generation 1  sha256:abababababababab until 2031-02-03\n"
        "+ scram scram-onprem-app  generation 2\n"
        "2 secret(s) issued into /etc/s\n")
    assert secrets.issued_text([], "Kubernetes Secrets") == "0 secret(s) issued into Kubernetes Secrets\n"
    assert json.loads(secrets.issued_json([scram])) == {"issued": [scram.to_record()]}
    rotation = Rotation([scram], flows=["payments-onprem-cloud", "hr-onprem-cloud"],
                        rolled=["kafka/payments-onprem-cloud"])
    assert secrets.rotation_text(rotation, "/etc/s") == (
        "~ scram scram-onprem-app  generation 2\n"
        "rolled kafka/payments-onprem-cloud\n"
        "restart these MM2 flows to pick up the new secrets: hr-onprem-cloud\n"
        "1 secret(s) rotated in /etc/s\n")
    everything_rolled = Rotation([scram], flows=["payments-onprem-cloud"], rolled=["kafka/payments-onprem-cloud"])
    assert "restart these" not in secrets.rotation_text(everything_rolled, "/etc/s")
    assert json.loads(secrets.rotation_json(rotation)) == rotation.to_record()


DESCRIPTION = {"run_dir": "/run", "ca": "/run/ca.crt", "secrets_file": "/run/secrets.json",
               "components": {"opa": {"endpoint": "http://127.0.0.1:8181", "pid": 42, "log": "/run/opa.log"},
                              "mm2-f": {"properties": "/run/f.properties", "pid": 7}}}


def test_stack_text_shows_health_pid_endpoint_and_log():
    assert stack.text(DESCRIPTION, {"opa": "ready"}) == (
        "run directory: /run\n"
        "CA certificate: /run/ca.crt  (credentials: /run/secrets.json, mode 0600)\n"
        "  opa              ready     pid 42       http://127.0.0.1:8181\n"
        "                   log: /run/opa.log\n"
        "  mm2-f            ?         pid 7        /run/f.properties\n"
        "                   log: -\n")


def test_stack_json_adds_health_without_changing_the_description():
    before = copy.deepcopy(DESCRIPTION)
    document = json.loads(stack.as_json(DESCRIPTION, {"opa": "ready", "kube-apiserver": "down"}))
    assert before == DESCRIPTION
    assert document["components"]["opa"] == {**before["components"]["opa"], "health": "ready"}
    assert document["components"]["kube-apiserver"] == {"health": "down"}  # probed, not described
    assert "health" not in document["components"]["mm2-f"]
    assert list(document) == list(before) and document["run_dir"] == "/run"


def test_imported_repo_files_round_trip_and_print_as_one_stream():
    imported = Imported(clusters={"clusters": {"onprem": {"bootstrap_servers": "a:9093"}}},
                        tenant={"name": "legacy", "topic_prefixes": ["legacy."]})
    files = importer.repo_files(imported, "legacy")
    assert list(files) == ["clusters.yaml", "tenants/legacy.yaml"]
    assert yaml.safe_load(files["tenants/legacy.yaml"]) == imported.tenant
    assert importer.text(files) == ("# clusters.yaml\nclusters:\n  onprem:\n    bootstrap_servers: a:9093\n"
                                    "---\n# tenants/legacy.yaml\nname: legacy\ntopic_prefixes:\n- legacy.\n")


HIGH = Violation("prefix_overlap", "high", "payments", "overlaps", "tenants/payments.yaml:3")
MEDIUM = Violation("owner_domain", "medium", "hr", "domain", "tenants/hr.yaml:2")


@pytest.mark.parametrize("output_format, expected", [
    ("text", render_violations.text([HIGH, MEDIUM])),
    ("markdown", render_violations.markdown([HIGH, MEDIUM])),
    ("sarif", render_violations.sarif([HIGH, MEDIUM], "repo")),
    ("junit", render_violations.junit([HIGH, MEDIUM], ["hr", "payments"])),
])
def test_validate_report_picks_the_renderer_of_the_format(output_format, expected):
    assert render_violations.report(output_format, [HIGH, MEDIUM], repo="repo", tenants={"hr": 1, "payments": 2},
                                    fail_on="high", scopes={}) == expected


@pytest.mark.parametrize("fail_on, valid", [("high", False), ("critical", True)])
def test_validate_json_is_valid_below_the_fail_on_severity(fail_on, valid):
    document = json.loads(render_violations.report("json", [HIGH, MEDIUM], repo="repo", tenants={"payments": 1},
                                                   fail_on=fail_on, scopes={"payments": {}}))
    assert document["valid"] is valid and document["fail_on"] == fail_on
    assert document["tenants"] == ["payments"] and document["scopes"] == {"payments": {}}


def test_import_cli_prints_the_repo_it_would_write(tmp_path):
    legacy = tmp_path / "legacy.properties"
    legacy.write_text("clusters = source, target\nsource.bootstrap.servers = s:9093\n"
                      "target.bootstrap.servers = t:9093\nsource->target.enabled = true\n"
                      "source->target.topics = orders\\\\..*\n")
    printed = run_cli("import", str(legacy), "--tenant", "legacy")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("# clusters.yaml\n") and "---\n# tenants/legacy.yaml\n" in printed.stdout
    written = run_cli("import", str(legacy), "--tenant", "legacy", "--out", str(tmp_path / "repo"))
    assert written.returncode == 0, written.stderr
    assert written.stdout == f"wrote {tmp_path / 'repo' / 'clusters.yaml'} and " \
                             f"{tmp_path / 'repo' / 'tenants' / 'legacy.yaml'}\n"
    on_disk = "---\n".join(f"# {name}\n{(tmp_path / 'repo' / name).read_text()}"
                           for name in ("clusters.yaml", "tenants/legacy.yaml"))
    assert printed.stdout == on_disk


@pytest.mark.parametrize("output_format", ["text", "json", "markdown", "sarif", "junit"])
def test_plan_report_picks_the_renderer_of_the_format(output_format):
    from governance.plan.diff import Plan
    from governance.render import plan as render_plan

    plan = Plan(tenants_added=["hr"], violations=[HIGH], new_violations=[HIGH])
    expected = {"text": render_plan.text(plan, "main"), "json": render_plan.as_json(plan, "main"),
                "markdown": render_plan.markdown(plan, "main"),
                "sarif": render_violations.sarif([HIGH], "repo"),
                "junit": render_violations.junit([HIGH], ["payments"], suite="mm2gov plan")}[output_format]
    assert render_plan.report(output_format, plan, "main", repo="repo", tenants=["payments"]) == expected
