"""The MirrorMaker 2 settings table (governance/model/mm2_settings.py) is the one place the settings are
written: an entry added to it reaches the dedicated-mode file, the Strimzi object and the repo document the
webhook pushes to OPA (what admission holds KafkaMirrorMaker2 objects to: mirrormaker_settings.rego, whose
tests refuse an object that lacks an entry, with the entry's why), and every entry is in what
`mm2gov generate` writes, with its value."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import javaproperties
import pytest
import yaml

from governance.admission.sync import REPO_DATA_PATH, REPO_DECISION_PATH, RepoSync
from governance.compile.mm2 import flow_properties
from governance.compile.strimzi import mirror_maker
from governance.config import load_inventory
from governance.config.schema import Cluster
from governance.model import capacity, mm2_settings
from governance.model.capacity import transaction_records
from governance.model.mm2_settings import Admission, Config, Held, InProperties, Scope, Section, Setting
from governance.model.names import mirror_maker_object, strimzi_file
from governance.model.tenancy import Flow
from governance.policy.decide import decide
from governance.policy.opa_http import Answer
from tests.conftest import REPO_ROOT
from tests.tools.decided import decided
from tests.tools.in_process import run_in_process
from tests.tools.scopes import model_flow

ACME = REPO_ROOT / "examples" / "acme"
CLUSTERS = {alias: Cluster.model_validate({
    "bootstrap_servers": f"{alias}:9093", "zone": alias, "strimzi": {"namespace": "kafka", "cluster": alias},
    "security": {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "ca_secret": f"{alias}-ca"},
}) for alias in ("onprem", "cloud")}
# An entry no writer knows of: it must reach them through the table alone.
NEW = Setting("mm2gov.test.only", "on", "a test entry", InProperties(Section.ISOLATION, Scope.PAIR),
              (Config.SOURCE, Config.CHECKPOINT, Config.WORKER),
              Admission("admission_mm2_test_only", (Held(Config.SOURCE), Held(Config.CHECKPOINT, required=False))))
STRIMZI_CONFIGS = {Config.SOURCE: ("mirror", "sourceConnector"), Config.CHECKPOINT: ("mirror", "checkpointConnector"),
                   Config.WORKER: ("target",)}


def flow(delivery: str = "at_least_once") -> Flow:
    return model_flow("payments", topics=["payments\\..*"], groups=["payments-.*"], delivery=delivery)


def strimzi_config(obj: dict[str, object], config: Config) -> dict[str, object]:
    spec = obj["spec"]
    assert isinstance(spec, dict)
    if config is Config.WORKER:
        return spec["target"]["config"]
    return spec["mirrors"][0][config.value]["config"]


@pytest.fixture
def with_new_entry(monkeypatch: pytest.MonkeyPatch) -> Setting:
    monkeypatch.setattr(mm2_settings, "SETTINGS", (*mm2_settings.SETTINGS, NEW))
    return NEW


def test_a_new_entry_reaches_the_properties_file_and_the_strimzi_object(with_new_entry):
    for delivery in ("at_least_once", "exactly_once"):
        props = javaproperties.loads(flow_properties("payments", flow(delivery), CLUSTERS, "/secrets", "# generated"))
        assert props["onprem->cloud.mm2gov.test.only"] == "on"
        assert "mm2gov.test.only" not in props  # pair-scoped, as the entry says
        obj = mirror_maker("payments", flow(delivery), CLUSTERS, "4.3.1")
        for config in (Config.SOURCE, Config.CHECKPOINT, Config.WORKER):
            assert strimzi_config(obj, config)["mm2gov.test.only"] == "on", config


class RecordingOpa:
    """OPA as the webhook's RepoSync talks to it: the repo decision answered with `scopes`, what is pushed kept."""

    def __init__(self, scopes: dict[str, Any]) -> None:
        self.scopes = scopes
        self.pushed: dict[str, Any] = {}

    def request(self, method: str, path: str, document: Any = None, content_type: str = "") -> Answer:
        if method == "POST" and path == REPO_DECISION_PATH:
            return Answer(200, json.dumps({"result": {"violations": [], "scopes": self.scopes}}).encode())
        if method == "GET":
            held = path.removesuffix("/clusters") in self.pushed
            return Answer(200, b'{"result": {}}') if held else Answer(404, b"{}")
        if method == "PATCH":  # the repo and its scopes in one JSON Patch of OPA's data
            self.pushed.update({path + op["path"]: op["value"] for op in document})
        return Answer(204, b"")


def test_a_new_entry_reaches_the_repo_document_the_webhook_pushes_to_opa(with_new_entry):
    opa = RecordingOpa(decide(load_inventory(ACME)).scopes)
    sync = RepoSync(ACME, opa)  # type: ignore[arg-type]
    assert sync.load()
    pushed = opa.pushed[REPO_DATA_PATH]["mm2_settings"]
    assert pushed[-1] == {
        "key": "mm2gov.test.only", "value": "on", "why": "a test entry", "exactly_once": False,
        "written": ["sourceConnector", "checkpointConnector", "worker"], "rule": "admission_mm2_test_only",
        "exact": False, "off": None,
        "held": {"sourceConnector": {"required": True, "unless_false": None},
                 "checkpointConnector": {"required": False, "unless_false": None}},
    }
    assert pushed == json.loads(json.dumps(mm2_settings.admission_input()))  # as JSON reaches OPA
    # every entry a KafkaMirrorMaker2 carries or admission holds, and none of the file's own
    assert [e["key"] for e in pushed] == [s.key for s in mm2_settings.SETTINGS if s.strimzi or s.admission]
    assert "metric.reporters" not in {e["key"] for e in pushed}


def test_without_the_entry_no_writer_has_it():
    assert "mm2gov.test.only" not in flow_properties("payments", flow(), CLUSTERS, "/secrets", "# generated")
    obj = mirror_maker("payments", flow(), CLUSTERS, "4.3.1")
    assert not any("mm2gov.test.only" in strimzi_config(obj, c) for c in (Config.SOURCE, Config.CHECKPOINT,
                                                                          Config.WORKER))


def test_no_two_entries_write_one_key_into_one_place():
    """A second entry of a key in one config (or one scoped key in the file) would silently replace the first."""
    for delivery in ("at_least_once", "exactly_once"):
        entries = mm2_settings.for_flow(flow(delivery))
        in_file = Counter(s.properties_key("onprem", "cloud") for s in entries if s.properties)
        in_strimzi = Counter((c, s.key) for s in entries for c in s.strimzi)
        assert [k for k, n in (in_file + in_strimzi).items() if n > 1] == []


def test_exactly_once_entries_only_on_exactly_once_flows():
    at_least_once = {s.key for s in mm2_settings.for_flow(flow())}
    exactly_once = {s.key for s in mm2_settings.for_flow(flow("exactly_once"))}
    assert exactly_once - at_least_once == {s.key for s in mm2_settings.SETTINGS if s.exactly_once or s.internal_rest}


def test_internal_rest_entries_on_flows_run_by_several_nodes_without_exactly_once():
    """KIP-710's internal REST server: followers of a flow on several nodes reach the leader through it."""
    two_nodes = model_flow("payments", topics=["payments\\..*"], capacity={
        "bytes_per_second": 2, "catch_up_bytes_per_second": 2, "source_partitions": 2, "tasks": 2, "nodes": 2,
        "cpu": "1", "memory": "1Gi", "heap": "1g", "source_fetch_byte_rate": 2, "target_produce_byte_rate": 2})
    one_node = model_flow("payments", topics=["payments\\..*"], capacity={
        **two_nodes.capacity.model_dump(), "nodes": 1})
    internal_rest = {s.key for s in mm2_settings.SETTINGS if s.internal_rest}
    assert internal_rest == {"dedicated.mode.enable.internal.rest", "listeners", "scheduled.rebalance.max.delay.ms"}
    assert {s.key for s in mm2_settings.for_flow(two_nodes)} - {s.key for s in mm2_settings.for_flow(flow())} \
        == internal_rest
    assert not internal_rest & {s.key for s in mm2_settings.for_flow(one_node)}


def test_an_exactly_once_flows_transaction_size_is_derived_from_its_capacity():
    """One transaction per poll (transaction.boundary=poll), of the records model/capacity.py derives from the
    flow's catch-up rate per task (a flow without capacity: the default), in the file and on Strimzi alike."""
    sized = model_flow("payments", topics=["payments\\..*"], delivery="exactly_once", capacity={
        "bytes_per_second": 20_000_000, "catch_up_bytes_per_second": 40_000_000, "source_partitions": 8,
        "tasks": 2, "nodes": 1, "cpu": "1", "memory": "1Gi", "heap": "1g", "source_fetch_byte_rate": 1,
        "target_produce_byte_rate": 1})
    for one, records in ((flow("exactly_once"), capacity.DEFAULT_TRANSACTION_RECORDS),
                         (sized, transaction_records(sized.capacity))):
        props = javaproperties.loads(flow_properties("payments", one, CLUSTERS, "/secrets", "# generated"))
        assert props["onprem.consumer.max.poll.records"] == str(records)
        assert props["onprem->cloud.transaction.boundary"] == "poll"
        source = strimzi_config(mirror_maker("payments", one, CLUSTERS, "4.3.1"), Config.SOURCE)
        assert (source["source.consumer.max.poll.records"], source["transaction.boundary"]) == (records, "poll")
    assert transaction_records(sized.capacity) == 9_766  # 40 MB/s over 2 tasks, a quarter second at 512 B
    at_least_once = flow_properties("payments", flow(), CLUSTERS, "/secrets", "# generated")
    assert "max.poll.records" not in at_least_once and "transaction.boundary" not in at_least_once

def generated(tmp_path: Path) -> tuple[Path, list[tuple[Flow, str | None]]]:
    """`mm2gov generate` on examples/acme with payments' flow onprem -> cloud made exactly_once (acme has none),
    so every entry of the table has a flow it applies to; and the flows as the policy resolved them, each with
    its target's Strimzi namespace (None: no KafkaMirrorMaker2)."""
    repo = tmp_path / "acme"
    shutil.copytree(ACME, repo)
    payments = repo / "tenants" / "payments.yaml"
    default = "    replication_policy: default\n"
    payments.write_text(payments.read_text().replace(default, f"{default}    delivery: exactly_once\n", 1))
    done = run_in_process("generate", str(repo), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    inventory, tenancy = decided(repo)
    strimzi = {alias: c.strimzi.namespace if c.strimzi else None for alias, c in inventory.clusters.items()}
    return tmp_path / "out", [(f, strimzi[f.target]) for _, f in tenancy.flows()]


def test_every_entry_is_in_the_generated_files_with_its_value(tmp_path):
    out, flows = generated(tmp_path)
    assert {f.delivery for f, namespace in flows if namespace} == {"at_least_once", "exactly_once"}
    seen: set[tuple[str, object]] = set()
    for item, namespace in flows:
        props = javaproperties.loads((out / "mm2" / f"{item.id}.properties").read_text())
        obj = yaml.safe_load((out / "strimzi" / strimzi_file("KafkaMirrorMaker2", namespace, mirror_maker_object(
            item.id))).read_text()) if namespace else None
        for setting in mm2_settings.for_flow(item):
            if setting.properties:
                assert props[setting.properties_key(item.source, item.target)] == str(setting.value), setting.key
                seen.add((setting.key, setting.value))
            for config in setting.strimzi if obj else ():
                assert strimzi_config(obj, config)[setting.key] == setting.value, (setting.key, config)
                seen.add((setting.key, setting.value))
    assert {(s.key, s.value) for s in mm2_settings.SETTINGS} <= seen
