"""The per-flow ReplicationPolicy (replication-policy/) in a real dedicated MirrorMaker 2 on the stack.

A tenant flow generated and applied by mm2gov, with checkpoints, offset syncs and heartbeats turned on and
the flow's policy configured, runs in Kafka's own MM2 against the SASL_SSL clusters: MM2 creates the flow's
own offset-syncs, checkpoints and heartbeats topics inside `mm2gov.<flow>.`, none of the names every flow
between the same clusters would share, keeps remote names `source.<topic>`, and translates a tenant
consumer group's offsets into a checkpoint and a synced group offset on the target.

compile/mm2.py writes every one of these settings and compile/acls.py every grant (apply puts them on the
broker): the test only speeds MM2's intervals up, and checks that the generated file already holds the rest.
The flow keys are scoped to the flow's pair (`source->target.mm2gov.flow.*`): MirrorMakerConfig.
connectorBaseConfig drops every top-level key that is not a connector config name, `config.providers*` or
`replication.policy*` (replication-policy/src/test/.../FlowPolicyWiringTest proves both with Kafka's classes).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import javaproperties
import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition

from devstack.repo import write_stack_repo
from governance.failover.records import parse_checkpoint
from governance.kafka.admin import admin_client, create_topics, describe_acls
from governance.kafka.records import Record, produce, read
from governance.model.acl import AclBinding
from governance.model.names import flow_id, mm2_flow_topics, mm2_principal, scram_secret
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli
from tests.tools.wait import wait_for

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

RECORDS = 5
COMMITTED = 3  # the tenant's group has consumed offsets 0..2 of its topic on the source


def flow_policy_properties(generated: str, flow: str, source: str, target: str,
                           key_prefix: str | None = None) -> dict[str, str]:
    """The generated flow's properties with the flow's ReplicationPolicy and MM2's offset translation on; the
    flow keys under `key_prefix` (default: the flow's pair, `<source>-><target>.`)."""
    props = {k: v for k, v in javaproperties.loads(generated).items() if ".mm2gov.flow." not in f".{k}"}
    names = mm2_flow_topics(flow)
    prefix = f"{source}->{target}." if key_prefix is None else key_prefix
    props |= {
        "replication.policy.class": "io.mm2gov.replication.FlowReplicationPolicy",
        "replication.policy.separator": ".",
        f"{prefix}mm2gov.flow.id": flow,
        f"{prefix}mm2gov.flow.offset-syncs.topic": names.offset_syncs,
        f"{prefix}mm2gov.flow.checkpoints.topic": names.checkpoints,
        f"{prefix}mm2gov.flow.heartbeats.topic": names.heartbeats,
        "emit.checkpoints.enabled": "true",
        "emit.offset-syncs.enabled": "true",
        "offset-syncs.topic.location": "target",
        "sync.group.offsets.enabled": "true",
        "emit.heartbeats.enabled": "true",
        # without this, emit.heartbeats.enabled=true also starts a target->source herder (heartbeats into the
        # source cluster, its own Connect group `target-mm2` there) that nothing of this flow may touch
        f"{target}->{source}.emit.heartbeats.enabled": "false",
        "heartbeats.replication.enabled": "false",
        # MM2 creates these three topics with replication factor 3 unless told: the broker's default, as for the rest
        "offset-syncs.topic.replication.factor": "-1",
        "checkpoints.topic.replication.factor": "-1",
        "heartbeats.topic.replication.factor": "-1",
        **PACE,
    }
    return props


# test pace only: MM2's defaults are 60 s for checkpoints and group offset syncs, 10 min for new groups
PACE = {
    "emit.checkpoints.interval.seconds": "1",
    "sync.group.offsets.interval.seconds": "1",
    "refresh.groups.interval.seconds": "1",
    "refresh.topics.interval.seconds": "1",
}


def paced(generated: str) -> str:
    """The generated properties with MM2's intervals shortened, nothing else changed."""
    return javaproperties.dumps(javaproperties.loads(generated) | PACE, timestamp=False)


def mm2_checkpoint_acls(flow: str, tenant_groups: str, remote_topics: str) -> list[AclBinding]:
    """What MirrorCheckpointTask needs on the target beyond the replication grants, to sync a tenant group's
    offsets there, each found missing on the real broker (MM2's log) and now granted by compile/acls.py:

    - READ on the tenant's GROUP prefix: without any grant on the group, FindCoordinator for describeConsumerGroups
      and alterConsumerGroupOffsets fails (GroupAuthorizationException); READ implies the DESCRIBE those need;
    - READ on the flow's remote TOPIC prefix: OffsetCommit (alterConsumerGroupOffsets) authorises READ on each
      topic (TopicAuthorizationException "Failed altering group offsets for ... source.<tenant>.orders-0").
    """
    principal = mm2_principal(flow)
    return [AclBinding(principal, "GROUP", tenant_groups, "PREFIXED", "READ"),
            AclBinding(principal, "TOPIC", remote_topics, "PREFIXED", "READ")]


def topics_of(config: dict[str, Any]) -> set[str]:
    return set(admin_client(config).list_topics(timeout=10).topics)


def read_checkpoints(config: dict[str, Any], topic: str, group: str, timeout: float) -> list[dict[str, Any]]:
    consumer = Consumer({**config, "group.id": f"verify-{uuid.uuid4().hex[:8]}", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "topic.metadata.refresh.interval.ms": 1000})
    consumer.subscribe([topic])
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    try:
        while not found and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                checkpoint = asdict(parse_checkpoint(message.key(), message.value()))
                if checkpoint["group"] == group:
                    found.append(checkpoint)
    finally:
        consumer.close()
    return found


def group_offsets(config: dict[str, Any], group: str) -> dict[tuple[str, int], int]:
    admin = admin_client(config)  # referenced until the answer is in: a collected client never completes its futures
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    try:
        partitions = future.result(timeout=10).topic_partitions or []
    except Exception:  # noqa: BLE001 -- not there yet (GROUP_ID_NOT_FOUND, coordinator loading): poll again
        return {}
    return {(p.topic, p.partition): p.offset for p in partitions if p.offset >= 0}


def offset_of(config: dict[str, Any], group: str, topic: str) -> list[int]:
    """[the group's committed offset for partition 0 of `topic`], or [] while it has none."""
    offsets = group_offsets(config, group)
    return [offsets[(topic, 0)]] if (topic, 0) in offsets else []


def commit_group_offset(config: dict[str, Any], topic: str, group: str, offset: int) -> None:
    """The tenant's consumer reads its topic on the source and commits `offset` for its group, then leaves."""
    consumer = Consumer({**config, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    try:
        wait_for(f"a record of {topic} as {group}", lambda: (m := consumer.poll(1.0)) is not None and not m.error(), 60)
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def flow_run(stack, tmp_path_factory) -> Iterator[dict[str, Any]]:
    tenant = f"rp{uuid.uuid4().hex[:6]}"  # shared brokers: a fresh tenant
    root = tmp_path_factory.mktemp("replication-policy")
    repo, secrets, out = root / "repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, [tenant])
    stack.export_secret_store(secrets)
    source, target = stack.kafka["source"], stack.kafka["target"]
    topic, group = f"{tenant}.orders", f"{tenant}-readers"
    create_topics(admin_client(source.admin_config()), [topic])
    produce(source.admin_config(), topic, [Record(f"k{i}".encode(), f"v{i}".encode(), []) for i in range(RECORDS)])
    applied = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    generated = run_cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr

    flow = flow_id(tenant, "source", "target")
    app = f"User:{tenant}-app"
    password = DirSecretStore(secrets).get(scram_secret("source", app), "password")
    commit_group_offset(source.client_config(f"{tenant}-app", password), topic, group, COMMITTED)

    generated_text = (out / "mm2" / f"{flow}.properties").read_text()
    # everything the flow needs is generated already: only MM2's pace differs
    props = flow_policy_properties(generated_text, flow, "source", "target")
    unpaced = {k: v for k, v in javaproperties.loads(generated_text).items() if k not in PACE}
    assert {k: v for k, v in props.items() if k not in PACE} == unpaced
    assert set(mm2_checkpoint_acls(flow, f"{tenant}-", f"source.{tenant}.")) <= describe_acls(
        admin_client(target.admin_config()))  # granted by apply, not by this test
    properties = root / f"{flow}.properties"
    properties.write_text(paced(generated_text))
    yield run_flow(stack, flow, properties, topic, group) | {
        "root": root, "generated": generated_text, "tenant": tenant, "flow": flow, "topic": topic, "group": group}


def run_flow(stack, flow: str, properties: Path, topic: str, group: str) -> dict[str, Any]:
    """Run the flow's MM2 until the tenant group's checkpoint, synced offset and heartbeats are on the target."""
    source, target = stack.kafka["source"], stack.kafka["target"]
    names, remote = mm2_flow_topics(flow), f"source.{topic}"
    before = {"source": topics_of(source.admin_config()), "target": topics_of(target.admin_config())}
    mm2 = stack.start_mirrormaker(flow, properties)
    try:
        checkpoints = read_checkpoints(target.admin_config(), names.checkpoints, group, timeout=90)
        [synced] = wait_for(f"{group}'s offset on the target",
                            lambda: offset_of(target.admin_config(), group, remote), 60)
        heartbeats = read(target.admin_config(), names.heartbeats, 1, timeout=30)
    finally:
        stack.stop_mirrormaker(flow)
    after = {"source": topics_of(source.admin_config()), "target": topics_of(target.admin_config())}
    return {"names": names, "remote": remote, "before": before, "after": after, "checkpoints": checkpoints,
            "synced": synced, "heartbeats": heartbeats, "log": Path(mm2.log_path).read_text(errors="replace")}


def test_flow_internal_topics_are_its_own_and_no_shared_name_is_created(flow_run):
    names, flow = flow_run["names"], flow_run["flow"]
    created = {alias: flow_run["after"][alias] - flow_run["before"][alias] for alias in ("source", "target")}
    own = {names.offset_syncs, names.checkpoints, names.heartbeats}
    assert own <= flow_run["after"]["target"]
    assert all(name.startswith(f"mm2gov.{flow}.") for name in own)
    # everything this MM2 created on the target is the flow's: its own topics (Connect's too) and its remote topic
    assert {t for t in created["target"] if not t.startswith(f"mm2gov.{flow}.")} <= {flow_run["remote"]}
    assert created["source"] == set()
    assert flow_run["heartbeats"].error is None and len(flow_run["heartbeats"].records) == 1  # the flow's, live
    shared = {"heartbeats", "source.checkpoints.internal", "mm2-offset-syncs.target.internal",
              "mm2-offset-syncs.source.internal", "source.heartbeats"}
    assert not shared & created["target"]
    assert not [t for t in flow_run["after"]["source"] if t.startswith("mm2-offset-syncs.")]


def test_remote_topic_keeps_source_dot_topic(flow_run):
    assert flow_run["remote"] == f"source.{flow_run['topic']}"
    assert flow_run["remote"] in flow_run["after"]["target"]
    assert flow_run["topic"] not in flow_run["after"]["target"]


def test_tenant_group_is_checkpointed_into_the_flows_topic_and_synced(flow_run):
    checkpoints = flow_run["checkpoints"]
    assert checkpoints, f"no checkpoint for {flow_run['group']} in {flow_run['names'].checkpoints}"
    first = checkpoints[0]
    assert (first["group"], first["topic"], first["partition"]) == (flow_run["group"], flow_run["remote"], 0)
    assert first["upstream"] == COMMITTED
    assert 0 < first["downstream"] <= COMMITTED
    assert flow_run["synced"] == first["downstream"]


def test_mm2_ran_without_config_or_authorization_errors(flow_run):
    log = flow_run["log"]
    assert "io.mm2gov.replication.FlowReplicationPolicy" in log
    for failure in ("ConfigException", "AuthorizationException", "AuthorizationFailed", "not authorized"):
        assert failure not in log, [line for line in log.splitlines() if failure in line][:5]


def test_top_level_flow_keys_never_reach_the_policy_and_mm2_fails_closed(stack, flow_run):
    """The same flow with the mm2gov.flow.* keys at the top level: MirrorMakerConfig drops them from every
    connector config, so the policy refuses to name anything and no shared topic is created instead."""
    flow, root = flow_run["flow"], flow_run["root"]
    source, target = stack.kafka["source"], stack.kafka["target"]
    props = flow_policy_properties(flow_run["generated"], flow, "source", "target", key_prefix="")
    properties = root / f"{flow}-top-level.properties"
    properties.write_text(javaproperties.dumps(props, timestamp=False))
    before = {"source": topics_of(source.admin_config()), "target": topics_of(target.admin_config())}
    mm2 = stack.start_mirrormaker(f"{flow}-top-level", properties)
    try:
        failed = wait_for("MM2's three connectors to fail",
                          lambda: failed_connectors(mm2.log_path) == MM2_CONNECTORS and MM2_CONNECTORS, 60)
    finally:
        stack.stop_mirrormaker(f"{flow}-top-level")
    after = {"source": topics_of(source.admin_config()), "target": topics_of(target.admin_config())}
    assert after == before
    log = Path(mm2.log_path).read_text(errors="replace")
    assert log.count('ConfigException: Missing required configuration "mm2gov.flow.id"') >= len(failed)


MM2_CONNECTORS = {"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"}


def failed_connectors(log_path: Path) -> set[str]:
    """The connectors MM2's Connect herder logged it failed to start."""
    text = Path(log_path).read_text(errors="replace")
    return set(re.findall(r"Failed to start connector '(\w+)'", text))
