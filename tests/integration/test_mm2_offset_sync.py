"""Offset translation per flow, on real brokers with real MirrorMaker 2s: two tenants between the same clusters.

Each tenant's flow runs exactly as `mm2gov generate` writes it (only MM2's intervals shortened) with the ACLs
`mm2gov apply` grants. A tenant's consumer group that stopped part-way through its topic on the source resumes
on the target from the offsets its flow's MM2 translated and synced into the group, and loses no record. Each
flow's offset syncs, checkpoints and heartbeats are its own topics on the target, and the broker refuses them
to everyone else: the other tenant's principal and the other flow's MM2 principal can neither read nor write
them, nor join the first tenant's group (whose committed offsets are its translated position).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from devstack.repo import write_stack_repo
from governance.compile.mm2_logging import log4j2_path
from governance.errors import RuntimeFailure
from governance.failover.records import parse_checkpoint
from governance.kafka.admin import admin_client, create_topics
from governance.kafka.records import Record, produce, read
from governance.model.names import flow_id, mm2_flow_topics, mm2_user, scram_secret
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli
from tests.integration.test_replication_policy import (
    commit_group_offset,
    offset_of,
    paced,
    read_checkpoints,
    wait_for,
)

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

RECORDS = 10
COMMITTED = 4  # each tenant's group consumed offsets 0..3 of its topic on the source, then stopped
DENIED = {KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.GROUP_AUTHORIZATION_FAILED}


@pytest.fixture(scope="module")
def two_flows(stack, tmp_path_factory) -> Iterator[dict[str, Any]]:
    run = uuid.uuid4().hex[:5]
    tenants = [f"osa{run}", f"osb{run}"]  # shared brokers: fresh tenants, one flow each, same source and target
    root = tmp_path_factory.mktemp("offset-sync")
    repo, secrets, out = root / "repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, tenants)
    stack.export_secret_store(secrets)
    source, target = stack.kafka["source"], stack.kafka["target"]
    create_topics(admin_client(source.admin_config()), [f"{t}.orders" for t in tenants])
    for tenant in tenants:
        produce(source.admin_config(), f"{tenant}.orders",
                [Record(f"k{i}".encode(), f"{tenant}-v{i}".encode(), []) for i in range(RECORDS)])
    applied = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    generated = run_cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr

    store = DirSecretStore(secrets)
    info: dict[str, dict[str, Any]] = {}
    for tenant in tenants:
        flow = flow_id(tenant, "source", "target")
        app, mm2 = f"{tenant}-app", mm2_user(flow)
        info[tenant] = {
            "flow": flow, "topics": mm2_flow_topics(flow), "group": f"{tenant}-readers",
            "topic": f"{tenant}.orders", "remote": f"source.{tenant}.orders",
            "app": target.client_config(app, store.get(scram_secret("target", f"User:{app}"), "password")),
            "mm2": target.client_config(mm2, store.get(scram_secret("target", f"User:{mm2}"), "password")),
        }
        source_app = source.client_config(app, store.get(scram_secret("source", f"User:{app}"), "password"))
        commit_group_offset(source_app, info[tenant]["topic"], info[tenant]["group"], COMMITTED)
        properties = root / f"{flow}.properties"
        properties.write_text(paced((out / "mm2" / f"{flow}.properties").read_text()))
        info[tenant]["properties"] = properties

    started = []
    try:
        for tenant in tenants:
            mm2 = stack.start_mirrormaker(info[tenant]["flow"], info[tenant]["properties"],
                                          log4j_config=out / log4j2_path(info[tenant]["flow"]))
            info[tenant]["logs"] = (mm2.log_path, mm2.home / f"{info[tenant]['flow']}.log")
            started.append(info[tenant]["flow"])
        for tenant in tenants:  # synced into the tenant's own group on the target, read as the tenant
            flow = info[tenant]
            [flow["synced"]] = wait_for(f"{flow['group']}'s translated offset on the target",
                                        lambda flow=flow: offset_of(flow["app"], flow["group"], flow["remote"]), 120)
            flow["checkpoints"] = read_checkpoints(target.admin_config(), flow["topics"].checkpoints, flow["group"],
                                                   timeout=60)
            flow["heartbeats"] = read(target.admin_config(), flow["topics"].heartbeats, 1, timeout=60)
    finally:
        for flow in started:
            stack.stop_mirrormaker(flow)
    yield {"tenants": tenants, "info": info, "admin": target.admin_config()}


def resume(config: dict[str, Any], topic: str, group: str, timeout: float = 60) -> list[tuple[int, bytes]]:
    """Consume `topic` as the group, from its committed offset, to the end: (offset, value) per record."""
    consumer = Consumer({**config, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got: list[tuple[int, bytes]] = []
    try:
        wait_for(f"{topic} read to its end as {group}", lambda: _poll_until_end(consumer, got), timeout)
    finally:
        consumer.close()
    return got


def _poll_until_end(consumer: Consumer, got: list[tuple[int, bytes]]) -> bool:
    message = consumer.poll(1.0)
    if message is not None:
        assert message.error() is None, message.error()
        got.append((message.offset(), message.value()))
    return bool(got) and got[-1][0] == RECORDS - 1


def committed_error(config: dict[str, Any], topic: str, group: str) -> KafkaError | None:
    """The broker's answer to fetching `group`'s committed offset of `topic` as this principal: None if allowed."""
    consumer = Consumer({**config, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.committed([TopicPartition(topic, 0)], timeout=20)
    except KafkaException as exc:
        return exc.args[0]
    finally:
        consumer.close()
    return None


def produce_error(config: dict[str, Any], topic: str) -> str:
    try:
        produce(config, topic, [Record(b"k", b"forged", [])], timeout=15)
    except RuntimeFailure as exc:
        return str(exc)
    return ""


def test_each_flow_checkpoints_and_syncs_its_own_group(two_flows):
    for tenant in two_flows["tenants"]:
        flow = two_flows["info"][tenant]
        assert 0 < flow["synced"] <= COMMITTED, flow["synced"]
        assert flow["checkpoints"], f"no checkpoint of {flow['group']} in {flow['topics'].checkpoints}"
        first = flow["checkpoints"][0]
        assert (first["group"], first["topic"], first["upstream"]) == (flow["group"], flow["remote"], COMMITTED)
        assert flow["heartbeats"].error is None and len(flow["heartbeats"].records) == 1
        # its checkpoints topic carries its own tenant's groups only, never the other flow's
        records = read(two_flows["admin"], flow["topics"].checkpoints, 100, timeout=10).records
        groups = {parse_checkpoint(r.key, r.value).group for r in records}
        assert groups == {flow["group"]}, groups


def test_stopped_group_resumes_on_target_with_no_record_lost(two_flows):
    for tenant in two_flows["tenants"]:
        flow = two_flows["info"][tenant]
        # the tenant's own principal reads its group's translated offset, then resumes from it
        assert committed_error(flow["app"], flow["remote"], flow["group"]) is None
        resumed = resume(flow["app"], flow["remote"], flow["group"])
        assert resumed[0][0] == flow["synced"]
        values = [value for _, value in resumed]
        # at least once: every record the group had not consumed on the source, maybe a few it had
        not_consumed = [f"{tenant}-v{i}".encode() for i in range(COMMITTED, RECORDS)]
        assert values[-len(not_consumed):] == not_consumed
        assert values == [f"{tenant}-v{i}".encode() for i in range(flow["synced"], RECORDS)]


@pytest.mark.parametrize("who", ["app", "mm2"])
def test_other_tenant_and_other_flows_mm2_are_refused_the_flows_topics(two_flows, who):
    owner, other = (two_flows["info"][t] for t in two_flows["tenants"])
    config = other[who]
    for topic in (owner["topics"].offset_syncs, owner["topics"].checkpoints, owner["topics"].heartbeats):
        # a group of the other principal's own, so that only the topic decides
        own_group = f"{two_flows['tenants'][1]}-probe" if who == "app" else f"mm2gov.{other['flow']}.probe"
        result = read(config, topic, 1, timeout=30, group=own_group)
        assert result.records == [] and result.error is not None, (who, topic)
        assert result.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, (who, topic, result.error)
        refused = produce_error(config, topic)
        assert "TOPIC_AUTHORIZATION_FAILED" in refused, (who, topic, refused)
    # nor join the owner's group, whose committed offsets are its translated position
    joined = read(config, owner["remote"], 1, timeout=30, group=owner["group"])
    assert joined.records == [] and joined.error is not None, who
    assert joined.error.code() in DENIED, (who, joined.error)


def test_flows_own_topics_are_only_its_mm2s(two_flows):
    """Not even the flow's own tenant reads or writes them: the tenant uses its group offsets; only the flow's
    MM2 principal reaches `mm2gov.<flow>.`."""
    owner = two_flows["info"][two_flows["tenants"][0]]
    result = read(owner["app"], owner["topics"].checkpoints, 1, timeout=30, group=f"{two_flows['tenants'][0]}-probe")
    assert result.error is not None and result.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    mine = read(owner["mm2"], owner["topics"].checkpoints, 1, timeout=30, group=f"mm2gov.{owner['flow']}.probe")
    assert mine.error is None and mine.records


def test_each_flows_mm2_logs_json_lines_with_its_own_tenant_and_flow(two_flows):
    """issue 17 item 5: the generated log4j2 configuration, read by the real MM2's log4j: every event one JSON
    object a line carrying the flow's tenant and id, in the flow's own file (and on stdout), never another's."""
    for tenant in two_flows["tenants"]:
        flow = two_flows["info"][tenant]["flow"]
        stdout, own_file = two_flows["info"][tenant]["logs"]
        events = [json.loads(line) for line in own_file.read_text().splitlines()]
        assert len(events) > 20
        assert {(e["tenant"], e["flow"]) for e in events} == {(tenant, flow)}
        assert {"timeMillis", "level", "loggerName", "message"} <= set(events[0])
        assert any("Kafka MirrorMaker started" in e["message"] for e in events)
        printed = [json.loads(line) for line in stdout.read_text().splitlines() if line.startswith("{")]
        assert len(printed) >= len(events) and {(e["tenant"], e["flow"]) for e in printed} == {(tenant, flow)}
