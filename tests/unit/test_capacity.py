"""Capacity (issue 27, docs/capacity.md): the arithmetic that sizes a flow, the repo files that declare it,
and what `generate`, `size` and `plan` make of it, through the real OPA (`decided_by_warm_opa`).

A flow without capacity keeps today's output byte for byte; a flow with capacity gets its tasks, nodes,
resources and quotas everywhere they apply, each computed once (model/capacity.py) and read by every writer.
"""

from __future__ import annotations

import json
from pathlib import Path

import javaproperties
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from governance.config.loader import InvalidConfig, load_inventory
from governance.model import capacity
from governance.model.capacity import size_flow, transaction_records
from tests.tools.capacity import CAPACITY_YAML, FLOW, PAYMENTS_CAPACITY, acme_with
from tests.tools.in_process import run_in_process

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")


# -- the arithmetic --------------------------------------------------------------------------------------------

@given(catch_up=st.integers(1, 10**12), task_rate=st.integers(1, 10**10), per_node=st.integers(1, 64),
       source_brokers=st.integers(1, 100), target_brokers=st.integers(1, 100))
def test_tasks_nodes_and_quotas_are_the_least_that_carry_the_catch_up_rate(catch_up, task_rate, per_node,
                                                                          source_brokers, target_brokers):
    sized = size_flow(bytes_per_second=catch_up, catch_up_bytes_per_second=catch_up, source_partitions=None,
                      task_bytes_per_second=task_rate, tasks_per_node=per_node, cpu="1", memory="1Gi", heap="1g",
                      source_brokers=source_brokers, target_brokers=target_brokers)
    # enough tasks and nodes for the rate, and one fewer would not be
    assert sized.tasks * task_rate >= catch_up and (sized.tasks == 1 or (sized.tasks - 1) * task_rate < catch_up)
    assert sized.nodes * per_node >= sized.tasks > (sized.nodes - 1) * per_node
    # the brokers together let through the whole rate, and one byte less per broker would not
    for rate, brokers in ((sized.source_fetch_byte_rate, source_brokers),
                          (sized.target_produce_byte_rate, target_brokers)):
        assert rate * brokers >= catch_up > (rate - 1) * brokers


@given(catch_up=st.integers(1, 10**12), tasks=st.integers(1, 64))
def test_an_exactly_once_transaction_carries_a_quarter_second_of_the_tasks_catch_up_within_bounds(catch_up, tasks):
    sized = size_flow(bytes_per_second=catch_up, catch_up_bytes_per_second=catch_up, source_partitions=None,
                      task_bytes_per_second=max(1, catch_up // tasks), tasks_per_node=64, cpu="1", memory="1Gi",
                      heap="1g", source_brokers=1, target_brokers=1)
    records = transaction_records(sized)
    assert capacity.MIN_TRANSACTION_RECORDS <= records <= capacity.MAX_TRANSACTION_RECORDS
    def carries(n: int) -> int:  # what n records carry of the task's catch-up, against `wanted` (integers, exact)
        return n * capacity.RECORD_BYTES * sized.tasks * 1000

    wanted = catch_up * capacity.TRANSACTION_MS
    if records < capacity.MAX_TRANSACTION_RECORDS:
        assert carries(records) >= wanted  # a transaction carries the interval...
    if records > capacity.MIN_TRANSACTION_RECORDS:
        assert carries(records - 1) < wanted  # ...and one record fewer would not


def test_transaction_records_examples():
    def sized(catch_up: int, tasks: int) -> capacity.Capacity:
        return size_flow(bytes_per_second=catch_up, catch_up_bytes_per_second=catch_up, source_partitions=None,
                         task_bytes_per_second=-(-catch_up // tasks), tasks_per_node=4, cpu="1", memory="1Gi",
                         heap="1g", source_brokers=3, target_brokers=3)
    assert transaction_records(None) == capacity.DEFAULT_TRANSACTION_RECORDS == 5_000
    assert transaction_records(sized(10_000_000, 1)) == 4_883  # 10 MB/s * 0.25 s / 512 B
    assert transaction_records(sized(40_000_000, 4)) == 4_883  # per task
    assert transaction_records(sized(100_000, 1)) == 500  # Kafka's default, never fewer
    assert transaction_records(sized(100_000_000, 1)) == 20_000  # bounded


# -- the repo files --------------------------------------------------------------------------------------------

def test_catch_up_below_the_steady_rate_is_refused_where_it_is_written(tmp_path):
    repo = acme_with(tmp_path, CAPACITY_YAML, "    capacity: {bytes_per_second: 5000, catch_up_bytes_per_second: 10}\n")
    with pytest.raises(InvalidConfig) as refused:
        load_inventory(repo)
    assert "tenants/payments.yaml:16" in str(refused.value)
    assert "is below bytes_per_second (5000)" in str(refused.value)


def test_capacity_yaml_naming_an_unknown_cluster_is_refused(tmp_path):
    repo = acme_with(tmp_path, CAPACITY_YAML + "  moon: {brokers: 1, replication_bytes_per_second: 1}\n", None)
    with pytest.raises(InvalidConfig) as refused:
        load_inventory(repo)
    assert "capacity.yaml:14: clusters.moon: unknown cluster 'moon'" in str(refused.value)


def test_capacity_yaml_with_an_unknown_key_is_refused(tmp_path):
    repo = acme_with(tmp_path, CAPACITY_YAML.replace("  flow_nodes: 2\n", "  flow_nodes: 2\n  flow_tasks: 9\n"), None)
    with pytest.raises(InvalidConfig) as refused:
        load_inventory(repo)
    assert "capacity.yaml:10: limits.flow_tasks: unknown key 'flow_tasks'" in str(refused.value)


def test_measured_at_is_read_quoted_or_not(tmp_path):
    quoted = CAPACITY_YAML.replace("measured_at: 2026-11-26T10:00:00Z", 'measured_at: "2026-11-26T10:00:00Z"')
    for text in (CAPACITY_YAML, quoted):
        inventory = load_inventory(acme_with(tmp_path / str(hash(text)), text, None))
        assert inventory.capacity is not None
        assert inventory.capacity.calibration.measured_at.isoformat() == "2026-11-26T10:00:00+00:00"


# -- generate ----------------------------------------------------------------------------------------------------

def generate(repo: Path, out: Path) -> dict[str, bytes]:
    done = run_in_process("generate", str(repo), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_flows_without_capacity_keep_their_output_byte_for_byte(tmp_path):
    """capacity.yaml alone changes nothing generated: only flows that declare capacity are sized."""
    before = generate(acme_with(tmp_path / "a", None, None), tmp_path / "out-a")
    after = generate(acme_with(tmp_path / "b", CAPACITY_YAML, None), tmp_path / "out-b")
    assert after == before
    assert not any(name.startswith("quotas/") for name in after)


@pytest.fixture(scope="module")
def sized_output(tmp_path_factory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("sized")
    out = tmp / "out"
    generate(acme_with(tmp, CAPACITY_YAML, PAYMENTS_CAPACITY), out)
    return {"out": out}


def test_the_sized_flow_gets_its_tasks_and_internal_rest_in_its_dedicated_file(sized_output):
    out = sized_output["out"]
    assert isinstance(out, Path)
    props = javaproperties.loads((out / "mm2" / f"{FLOW}.properties").read_text())
    # 25 MB/s over 10 MB/s a task: 3 tasks; 2 a node: 2 nodes, so followers need the leader's internal REST
    assert props["onprem->cloud.tasks.max"] == "3"
    assert props["dedicated.mode.enable.internal.rest"] == "true"
    assert props["listeners"] == "http://127.0.0.1:0"
    assert "cloud.exactly.once.source.support" not in props  # several nodes, not exactly once
    text = (out / "mm2" / f"{FLOW}.properties").read_text()
    assert "java -Xms1g -Xmx1g -cp 'libs/*' org.apache.kafka.connect.mirror.MirrorMaker" in text
    other = javaproperties.loads((out / "mm2" / "marketing-onprem-to-cloud.properties").read_text())
    assert not any(key.endswith("tasks.max") or key == "dedicated.mode.enable.internal.rest" for key in other)


def test_the_sized_flow_gets_replicas_tasks_resources_and_heap_on_strimzi(sized_output):
    out = sized_output["out"]
    assert isinstance(out, Path)
    (mm2,) = yaml.safe_load_all((out / "strimzi" / f"kafkamirrormaker2_kafka-cloud_{FLOW}.yaml").read_text())
    spec = mm2["spec"]
    assert spec["replicas"] == 2
    assert spec["mirrors"][0]["sourceConnector"]["tasksMax"] == 3
    assert spec["mirrors"][0]["checkpointConnector"]["tasksMax"] == 1
    assert spec["resources"] == {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "2Gi"}}
    assert spec["jvmOptions"] == {"-Xms": "1g", "-Xmx": "1g"}
    (plain,) = yaml.safe_load_all(
        (out / "strimzi" / "kafkamirrormaker2_kafka-cloud_marketing-onprem-to-cloud.yaml").read_text())
    assert plain["spec"]["replicas"] == 1 and "resources" not in plain["spec"]


def test_the_sized_flows_principal_gets_its_quotas_per_broker(sized_output):
    out = sized_output["out"]
    assert isinstance(out, Path)
    principal = f"User:mm2-{FLOW}"
    # 25 MB/s catch-up: all of it on onprem's one broker, a third on each of cloud's three (rounded up)
    assert json.loads((out / "quotas" / "onprem.json").read_text())["quotas"] == [
        {"principal": principal, "consumer_byte_rate": 25000000}]
    assert json.loads((out / "quotas" / "cloud.json").read_text())["quotas"] == [
        {"principal": principal, "producer_byte_rate": 8333334}]
    assert sorted(p.name for p in (out / "quotas").iterdir()) == ["cloud.json", "onprem.json"]
    (user,) = yaml.safe_load_all((out / "strimzi" / f"kafkauser_kafka-cloud_mm2-{FLOW}.yaml").read_text())
    assert user["spec"]["quotas"] == {"producerByteRate": 8333334}
    (tenant_user,) = yaml.safe_load_all((out / "strimzi" / "kafkauser_kafka-cloud_payments-app.yaml").read_text())
    assert "quotas" not in tenant_user["spec"]


def test_a_principals_own_quota_is_set_where_it_has_acls(tmp_path):
    repo = acme_with(tmp_path, None, None)
    payments = repo / "tenants" / "payments.yaml"
    text = payments.read_text()
    anchor = '  - {name: "User:payments-app", access: [read, write]}\n'
    assert anchor in text
    payments.write_text(text.replace(anchor, '  - {name: "User:payments-app", access: [read, write], '
                                             'quota: {producer_byte_rate: 2000, request_percentage: 50}}\n'))
    out = tmp_path / "out"
    generate(repo, out)
    # payments lives on onprem and replicates into cloud and onprem-dr: its principal has ACLs on all three
    for cluster in ("onprem", "cloud", "onprem-dr"):
        assert json.loads((out / "quotas" / f"{cluster}.json").read_text())["quotas"] == [
            {"principal": "User:payments-app", "producer_byte_rate": 2000, "request_percentage": 50}]
    (user,) = yaml.safe_load_all((out / "strimzi" / "kafkauser_kafka-cloud_payments-app.yaml").read_text())
    assert user["spec"]["quotas"] == {"producerByteRate": 2000, "requestPercentage": 50}


def test_a_quota_that_limits_nothing_is_refused(tmp_path):
    repo = acme_with(tmp_path, None, None)
    payments = repo / "tenants" / "payments.yaml"
    payments.write_text(payments.read_text().replace(
        '  - {name: "User:payments-app", access: [read, write]}\n',
        '  - {name: "User:payments-app", access: [read, write], quota: {}}\n'))
    with pytest.raises(InvalidConfig) as refused:
        load_inventory(repo)
    assert "a quota sets producer_byte_rate, consumer_byte_rate or request_percentage" in str(refused.value)


def test_removing_the_capacity_removes_its_quota_files(tmp_path):
    out = tmp_path / "out"
    generate(acme_with(tmp_path / "sized", CAPACITY_YAML, PAYMENTS_CAPACITY), out)
    assert (out / "quotas" / "cloud.json").exists()
    generate(acme_with(tmp_path / "plain", CAPACITY_YAML, None), out)
    assert not (out / "quotas").exists() or not any((out / "quotas").iterdir())


def test_a_flow_that_cannot_be_sized_is_refused_and_nothing_is_written(tmp_path):
    repo = acme_with(tmp_path, None, PAYMENTS_CAPACITY)  # capacity without capacity.yaml
    done = run_in_process("generate", str(repo), "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "capacity_uncalibrated" in done.stderr
    assert not (tmp_path / "out").exists()




@pytest.mark.parametrize("value", ["25MB", "25 MB/s", "2.5e7", "25000000.0", "'25000000'", "true"])
@pytest.mark.parametrize("where", ["flow", "calibration", "principal"])
def test_a_rate_with_a_unit_or_not_a_whole_number_is_refused_in_those_words(tmp_path, value, where):
    calibration, flow = CAPACITY_YAML, PAYMENTS_CAPACITY
    if where == "flow":
        flow = f"    capacity: {{bytes_per_second: {value}}}\n"
    elif where == "calibration":
        calibration = CAPACITY_YAML.replace("task_bytes_per_second: 10000000", f"task_bytes_per_second: {value}")
    repo = acme_with(tmp_path, calibration, flow)
    if where == "principal":
        edit = repo / "tenants/payments.yaml"
        before = edit.read_text()
        quota = f"access: [read, write], quota: {{producer_byte_rate: {value}}}}}"
        edit.write_text(before.replace("access: [read, write]}", quota, 1))
        assert edit.read_text() != before
    done = run_in_process("validate", str(repo))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    expected = {"flow": "tenants/payments.yaml:16: flows[0].capacity.bytes_per_second",
                "calibration": "capacity.yaml:5: calibration.task_bytes_per_second",
                "principal": "tenants/payments.yaml:7: principals[0].quota.producer_byte_rate"}[where]
    assert f"{expected}: must be a whole number of bytes per second, without a unit (25000000 for 25 MB/s)" \
        in done.stderr

@pytest.mark.parametrize("measured_at, refused", [
    ("2026-11-25T23:59:59Z", True),  # a second before the sizing it would feed
    ("2026-11-26T01:00:00+02:00", True),  # 2026-11-25T23:00Z: the zone is read
    ("2026-11-26T00:00:00Z", False),  # measured for the sizing as it is (capacity.SIZING_SINCE)
    ("2026-11-25T19:00:00-05:00", False),  # the same instant
])
def test_a_calibration_older_than_the_sizing_that_reads_it_is_refused(tmp_path, measured_at, refused):
    stale = CAPACITY_YAML.replace("measured_at: 2026-11-26T10:00:00Z", f"measured_at: {measured_at}")
    repo = acme_with(tmp_path, stale, PAYMENTS_CAPACITY)
    done = run_in_process("generate", str(repo), "--out", str(tmp_path / "out"))
    if not refused:
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"capacity.yaml:2: calibration.measured_at: measured {measured_at[:10]}" in done.stderr
    assert "before this mm2gov's sizing last changed (2026-11-26T00:00:00+00:00)" in done.stderr
    assert "python bench/capacity.py --calibrate --write capacity.yaml" in done.stderr
    assert not (tmp_path / "out").exists()  # nothing written

# -- size and plan ---------------------------------------------------------------------------------------------

def test_size_reports_what_was_asked_derived_and_left(tmp_path):
    repo = acme_with(tmp_path, CAPACITY_YAML, PAYMENTS_CAPACITY)
    done = run_in_process("size", str(repo), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["calibration"]["measured_at"] == "2026-11-26T10:00:00Z"
    (flow,) = [f for f in report["flows"] if f["flow"] == FLOW]
    assert flow["asked"] == {"bytes_per_second": 5000000, "catch_up_bytes_per_second": 25000000,
                             "source_partitions": 6}
    assert flow["derived"] == {"tasks": 3, "nodes": 2, "cpu_per_node": "1", "memory_per_node": "2Gi",
                               "heap_per_node": "1g", "quotas": {"onprem": {"consumer_byte_rate": 25000000},
                                                                 "cloud": {"producer_byte_rate": 8333334}}}
    clusters = {c["cluster"]: c for c in report["clusters"]}
    assert clusters["cloud"]["into"]["bytes_per_second"] == 25000000
    assert clusters["cloud"]["into"]["headroom_bytes_per_second"] == 75000000
    assert clusters["cloud"]["into"]["flows"] == [FLOW]
    assert "marketing-onprem-to-cloud" in clusters["cloud"]["into"]["flows_without_capacity"]
    assert clusters["onprem"]["out_of"]["headroom_bytes_per_second"] == 75000000
    assert {v["rule"] for v in report["violations"]} == {"capacity_missing"}  # the flows without capacity
    text = run_in_process("size", str(repo))
    assert "3 task(s) on 2 node(s), each 1 CPU, 2Gi memory, 1g heap" in text.stdout
    assert "headroom 75.0 MB/s" in text.stdout


def test_size_exits_1_over_budget_and_names_the_flows(tmp_path):
    tight = CAPACITY_YAML.replace("cloud: {brokers: 3, replication_bytes_per_second: 100000000}",
                                  "cloud: {brokers: 3, replication_bytes_per_second: 20000000}")
    done = run_in_process("size", str(acme_with(tmp_path, tight, PAYMENTS_CAPACITY)))
    assert done.returncode == 1
    assert "headroom -5.0 MB/s" in done.stdout
    assert f"capacity_cluster_over_budget [cluster] cluster cloud: the flows into it, {FLOW} (25000000)" in done.stderr


def test_plan_shows_capacity_and_quota_changes(tmp_path):
    base = acme_with(tmp_path / "base", CAPACITY_YAML, None)
    head = acme_with(tmp_path / "head", CAPACITY_YAML, PAYMENTS_CAPACITY)
    done = run_in_process("plan", str(head), "--base", str(base), "--format", "json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    (change,) = plan["capacity"]
    assert change["flow"] == FLOW and change["before"] is None and change["after"]["tasks"] == 3
    assert sorted((q["cluster"], q["after"]) for q in plan["quotas"]) == [
        ("cloud", {"producer_byte_rate": 8333334}), ("onprem", {"consumer_byte_rate": 25000000})]
    text = run_in_process("plan", str(head), "--base", str(base)).stdout
    assert f"User:mm2-{FLOW} on cloud: none -> producer_byte_rate 8333334" in text
