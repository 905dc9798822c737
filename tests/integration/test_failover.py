"""`mm2gov failover` on real brokers with a real dedicated MirrorMaker 2: a tenant's flow generated and applied
by mm2gov (only MM2's intervals shortened), two of the tenant's consumer groups stopped part-way through its
topic on the source.

Before MM2 has checkpointed anything the switch is refused; once the flow's MM2 has checkpointed and synced
the groups, the report's offsets are the ones the clusters hold (read here independently, with consumers) and
the switch is safe; records produced on the source while MM2 is stopped are reported as exactly that many not
replicated, and the switch is refused again. Bad usage exits 2 and an address nothing listens on exits 3.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from confluent_kafka import Consumer, KafkaError, TopicPartition

from devstack.repo import as_yaml, tenant_document, write_stack_repo
from governance.kafka.admin import admin_client, create_topics
from governance.kafka.records import Record, produce
from governance.model.names import flow_id, remote_name, scram_secret
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli, secret_values
from tests.integration.test_replication_policy import commit_group_offset, paced, wait_for
from tests.tools.in_process import run_in_process

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

RECORDS = 10
COMMITTED = {"readers": 4, "audit": 7}  # each group consumed this many records of the topic on the source
MORE = 7  # produced on the source while MM2 is stopped


def failover(repo, secrets, tenant: str, *args: str, output: str = "json") -> subprocess.CompletedProcess[str]:
    """`mm2gov failover` in this process (tests/tools/in_process.py: the CLI's own main(), an interpreter start
    less per run); `no_flow` below runs it as its own process."""
    return run_in_process("failover", tenant, "--from", "source", "--to", "target", "--repo", str(repo),
                   "--secrets-dir", str(secrets), "--format", output, *args)


def report(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return json.loads(result.stdout)


def committed(config: dict[str, Any], group: str, topic: str) -> int:
    """The group's committed offset of partition 0, as a consumer of the group reads it."""
    consumer = Consumer({**config, "group.id": group, "enable.auto.commit": False})
    try:
        [found] = consumer.committed([TopicPartition(topic, 0)], timeout=20)
    finally:
        consumer.close()
    return found.offset


def settled(document: dict[str, Any], groups: set[str]) -> bool:
    """Every group checkpointed at its source offset, and the checkpoint synced into the group on the target."""
    rows = document["partitions"]
    return {r["group"] for r in rows} == groups and all(
        r["checkpoint"] and r["checkpoint"]["upstream"] == r["source"]["committed"]
        and r["target"]["committed"] == r["checkpoint"]["downstream"] for r in rows)


def free_port() -> int:
    with socket.socket() as probe:  # bound and closed: nothing listens there afterwards
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def prepare(stack, root, tenant: str, groups: dict[str, int], delivery: str = "at_least_once") -> dict[str, Any]:
    """The tenant's repo, applied and generated, its topic holding RECORDS records `v0`..., and each group's
    offset committed on the source by the tenant's own consumer."""
    repo, secrets, out = root / "repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, [])
    document = tenant_document(tenant)
    document["flows"][0]["delivery"] = delivery
    (repo / "tenants" / f"{tenant}.yaml").write_text(as_yaml(document))
    stack.export_secret_store(secrets)
    source = stack.kafka["source"]
    topic = f"{tenant}.orders"
    create_topics(admin_client(source.admin_config()), [topic])
    produce(source.admin_config(), topic, [Record(f"k{i}".encode(), f"v{i}".encode(), []) for i in range(RECORDS)])
    applied = run_in_process("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    generated = run_in_process("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr
    app = f"{tenant}-app"
    app_config = source.client_config(app, DirSecretStore(secrets).get(scram_secret("source", f"User:{app}"),
                                                                       "password"))
    for group, offset in groups.items():
        commit_group_offset(app_config, topic, group, offset)
    flow = flow_id(tenant, "source", "target")
    properties = root / f"{flow}.properties"
    properties.write_text(paced((out / "mm2" / f"{flow}.properties").read_text()))
    return {"repo": repo, "secrets": secrets, "flow": flow, "properties": properties, "topic": topic,
            "remote": remote_name("default", "source", topic)}


def mirror_until_settled(stack, prepared: dict[str, Any], tenant: str, groups: set[str]) -> None:
    """Run the flow's MM2 until every group's checkpoint is at its source offset and synced; then stop it.
    The polling runs `failover` in this process (tests/tools/in_process.py): a subprocess per poll would cost
    an interpreter start each; the reports the tests judge come from `mm2gov` processes."""
    stack.start_mirrormaker(prepared["flow"], prepared["properties"])
    args = ("failover", tenant, "--from", "source", "--to", "target", "--repo", str(prepared["repo"]),
            "--secrets-dir", str(prepared["secrets"]), "--format", "json")
    try:
        wait_for("the groups checkpointed and synced on the target", lambda: settled(
            report(run_in_process(*args)), groups), 180, interval=1)
    finally:
        stack.stop_mirrormaker(prepared["flow"])


def values_from(config: dict[str, Any], topic: str, offset: int, timeout: float = 60) -> list[bytes]:
    """The values a read_committed consumer reads on partition 0 of `topic` from `offset` to the end."""
    consumer = Consumer({**config, "group.id": f"failover-check-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False,
                         "isolation.level": "read_committed", "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, 0, offset)])
    values: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            if message.error() is None:
                values.append(message.value())
            elif message.error().code() == KafkaError._PARTITION_EOF:
                return values
            else:
                raise AssertionError(message.error())
    finally:
        consumer.close()
    raise AssertionError(f"{topic} not read to its end in {timeout:.0f} s")


def consumed_again(values: list[bytes], committed_offset: int) -> int:
    """Records among `values` that the group had consumed on the source (`v<i>` with i < its offset)."""
    return sum(1 for v in values if v.startswith(b"v") and int(v[1:]) < committed_offset)


@pytest.fixture(scope="module")
def run(stack, tmp_path_factory) -> Iterator[dict[str, Any]]:
    tenant = f"fo{uuid.uuid4().hex[:6]}"  # shared brokers: a fresh tenant
    groups = {f"{tenant}-{name}": offset for name, offset in COMMITTED.items()}
    prepared = prepare(stack, tmp_path_factory.mktemp("failover"), tenant, groups)
    repo, secrets, topic, remote = prepared["repo"], prepared["secrets"], prepared["topic"], prepared["remote"]
    source, target = stack.kafka["source"], stack.kafka["target"]
    found: dict[str, Any] = {"tenant": tenant, "topic": topic, "remote": remote, "groups": groups,
                             "secrets": secret_values(secrets)}
    found["before"] = failover(repo, secrets, tenant)
    found["before_text"] = failover(repo, secrets, tenant, output="text")

    mirror_until_settled(stack, prepared, tenant, set(groups))
    found["synced"] = failover(repo, secrets, tenant)  # MM2 stopped: nothing moves any more
    found["independent"] = {}
    for group, offset in groups.items():
        on_target = committed(target.admin_config(), group, remote)
        found["independent"][group] = {
            "source": committed(source.admin_config(), group, topic), "target": on_target,
            "reread": consumed_again(values_from(target.admin_config(), remote, on_target), offset)}

    produce(source.admin_config(), topic, [Record(b"k", f"late{i}".encode(), []) for i in range(MORE)])
    found["after"] = failover(repo, secrets, tenant)
    found["after_text"] = failover(repo, secrets, tenant, output="text")
    found["one_group"] = failover(repo, secrets, tenant, "--group", f"{tenant}-readers")
    found["unknown_group"] = failover(repo, secrets, tenant, "--group", f"{tenant}-nobody")
    found["unknown_tenant"] = failover(repo, secrets, f"{tenant}x")
    found["no_flow"] = run_cli("failover", tenant, "--from", "target", "--to", "source", "--repo", str(repo),
                               "--secrets-dir", str(secrets))
    clusters = yaml.safe_load((repo / "clusters.yaml").read_text())
    clusters["clusters"]["source"]["bootstrap_servers"] = f"127.0.0.1:{free_port()}"
    (repo / "clusters.yaml").write_text(yaml.safe_dump(clusters))
    found["unreachable"] = failover(repo, secrets, tenant)
    yield found


@pytest.fixture(scope="module")
def exactly_once(stack, tmp_path_factory) -> dict[str, Any]:
    """The same story for a `delivery: exactly_once` flow: MM2 writes transactionally, so transaction markers
    take offsets on the target between the records."""
    tenant = f"fe{uuid.uuid4().hex[:6]}"
    group, offset = f"{tenant}-readers", COMMITTED["readers"]
    prepared = prepare(stack, tmp_path_factory.mktemp("failover-eos"), tenant, {group: offset}, "exactly_once")
    repo, secrets, remote = prepared["repo"], prepared["secrets"], prepared["remote"]
    target = stack.kafka["target"]
    mirror_until_settled(stack, prepared, tenant, {group})
    found = {"synced": failover(repo, secrets, tenant), "text": failover(repo, secrets, tenant, output="text")}
    on_target = committed(target.admin_config(), group, remote)
    found["independent"] = {"target": on_target,
                            "reread": consumed_again(values_from(target.admin_config(), remote, on_target), offset)}
    produce(stack.kafka["source"].admin_config(), prepared["topic"],
            [Record(b"k", f"late{i}".encode(), []) for i in range(MORE)])
    found["after"] = failover(repo, secrets, tenant)
    return found


def test_no_checkpoint_yet_refuses_the_switch_and_says_why(run):
    before = run["before"]
    assert before.returncode == 1, before.stderr
    document = report(before)
    assert document["schema"] == "mm2gov.failover/v1" and document["ok"] is False
    assert {r["group"] for r in document["partitions"]} == set(run["groups"])
    for row in document["partitions"]:
        assert row["checkpoint"] is None and row["target"]["committed"] is None
        assert row["resume"] == {"offset": None, "from": "auto.offset.reset"}
        assert any("no checkpoint" in p for p in row["problems"]), row["problems"]
        assert any("auto.offset.reset" in p for p in row["problems"]), row["problems"]
    text = run["before_text"]
    assert text.returncode == 1 and "no checkpoint" in text.stdout
    assert text.stdout.rstrip().splitlines()[-1].startswith("FAIL: NOT safe to switch")


def test_synced_groups_are_safe_to_switch_with_the_offsets_the_clusters_hold(run):
    synced = run["synced"]
    assert synced.returncode == 0, synced.stdout + synced.stderr
    document = report(synced)
    assert document["ok"] is True
    rows = {r["group"]: r for r in document["partitions"]}
    assert set(rows) == set(run["groups"])
    for group, row in rows.items():
        held = run["independent"][group]
        assert (row["topic"], row["partition"], row["remote_topic"]) == (run["topic"], 0, run["remote"])
        assert row["source"]["committed"] == held["source"] == run["groups"][group]
        assert row["source"]["log_end"] == RECORDS and row["source"]["members"] == 0
        assert row["target"]["committed"] == held["target"]
        assert row["checkpoint"]["downstream"] == held["target"]  # translated
        assert row["resume"] == {"offset": held["target"], "from": "target-committed"}
        assert 0 < held["target"] <= held["source"]
        assert row["not_replicated"] == 0 and row["skipped"] == 0 and row["loss"] == 0
        # the records it had consumed on the source that a consumer reads again on the target from there
        assert row["reread"] == held["reread"] == held["source"] - held["target"]
        assert row["problems"] == []


def test_records_produced_while_mm2_is_stopped_are_reported_not_replicated(run):
    after = run["after"]
    assert after.returncode == 1, after.stderr
    rows = report(after)["partitions"]
    assert {r["group"] for r in rows} == set(run["groups"])
    for row in rows:
        assert row["source"]["log_end"] == RECORDS + MORE
        assert row["not_replicated"] == MORE and row["loss"] == MORE
        assert any(f"{MORE} not replicated" in p for p in row["problems"]), row["problems"]
    text = run["after_text"]
    assert text.returncode == 1
    assert f"{MORE} not replicated" in text.stdout and "FAIL: NOT safe to switch" in text.stdout


def test_exactly_once_flow_counts_records_not_offsets(exactly_once):
    synced = exactly_once["synced"]
    assert synced.returncode == 0, synced.stdout + synced.stderr
    [row] = report(synced)["partitions"]
    assert report(synced)["delivery"] == "exactly_once"
    assert row["target"]["log_end"] > RECORDS  # transaction markers took offsets on the target
    assert row["not_replicated"] == 0 and row["loss"] == 0
    assert row["resume"]["offset"] == row["target"]["committed"] == exactly_once["independent"]["target"]
    assert row["reread"] == exactly_once["independent"]["reread"]
    assert "isolation.level=read_committed" in exactly_once["text"].stdout
    after = exactly_once["after"]
    assert after.returncode == 1, after.stderr
    [row] = report(after)["partitions"]
    assert row["not_replicated"] == MORE


def test_group_option_limits_the_report(run):
    one = run["one_group"]
    assert one.returncode == 1, one.stderr  # still not replicated
    assert {r["group"] for r in report(one)["partitions"]} == {f"{run['tenant']}-readers"}


@pytest.mark.parametrize("case, says", [("unknown_group", "nobody: not a consumer group of flow"),
                                        ("unknown_tenant", "no tenant"),
                                        ("no_flow", "has no flow target -> source")])
def test_bad_usage_exits_2_with_one_line(run, case, says):
    result = run[case]
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_unreachable_cluster_exits_3_with_one_line(run):
    result = run["unreachable"]
    assert result.returncode == 3, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: cluster source") and "unreachable" in lines[-1], result.stderr
    assert "Traceback" not in result.stderr


def test_no_secret_in_any_output(run):
    outputs = [run[k].stdout + run[k].stderr for k in ("before", "before_text", "synced", "after", "after_text",
                                                       "one_group", "unknown_group", "unreachable")]
    assert run["secrets"]
    for value in run["secrets"]:
        assert not any(value in output for output in outputs)

