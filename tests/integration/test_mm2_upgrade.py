"""A flow's MirrorMaker 2 rolled from Kafka 3.x to the pinned 4.x, on real brokers with real MM2s (issue 16).

Two tenants between the same clusters, each flow exactly as `mm2gov generate` writes it (only MM2's intervals
shortened) with the ACLs `mm2gov apply` grants: one `delivery: exactly_once`, one `at_least_once`. Both flows
start on the last Kafka 3.x release's MM2 (KAFKA3_VERSION, with mm2gov's replication-policy jar, built against
4.x) while a producer writes sequence-numbered records to a 3-partition topic of each tenant. Mid-stream each
flow is rolled: its 3.x MM2 stopped gracefully, the 4.x MM2 started on the same properties file, hence the same
per-flow Connect group and topics. Once the producer finished and the targets caught up: every record is on
the target exactly once (read_committed), the 4.x MM2's first record of each partition is the one after the
3.x MM2's last committed source offset (it resumed, it did not start from 0), the flow's Connect offsets
moved on to the source's end, and the tenant's consumer group offsets keep being synced to the target.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from confluent_kafka import Consumer, TopicPartition

from devstack.mirrormaker import MirrorMaker
from devstack.repo import write_stack_repo
from governance.kafka.admin import admin_client, create_topics
from governance.kafka.records import Record, produce
from governance.migrate.offsets import RawRecord, SourceKey, SourcePosition, latest_positions
from governance.model.names import connect_names, flow_id, mm2_flow_topics, scram_secret
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli
from tests.integration.feeder import Feeder, value
from tests.integration.test_replication_policy import group_offsets, paced
from tests.tools.offsets import end_offsets, read_to_end
from tests.tools.wait import wait_for

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

log = logging.getLogger(__name__)

# The producer runs until the roll is over and AFTER_ROLL more records per tenant were produced, then stops:
# records are in flight through the whole roll (asserted), and the stream is no longer than the roll needs.
PARTITIONS = 3
BATCH = 400
PACE_SECONDS = 0.3  # between batches: ~1,300 records/s per tenant
ROLL_AT = 2_000  # records on each target (from the 3.x MM2) before the roll starts: a few batches per partition
AFTER_ROLL = 2_000  # records per tenant produced after both 4.x MM2s started
# at-least-once commits source offsets every 2 s (the worker's default is 60 s); exactly-once in each transaction
FLUSH = {"target.offset.flush.interval.ms": "2000"}
STOPPED_LINE = b"Kafka MirrorMaker stopped"


def read_topic(config: dict[str, Any], topic: str, partitions: int,
               isolation: str = "read_committed") -> list[tuple[int, int, bytes | None, bytes | None]]:
    """Every record of `topic` to its end: (partition, offset, key, value), in each partition's order."""
    return read_to_end(config, topic, range(partitions), isolation)[0]


def commit_at_end(config: dict[str, Any], topic: str, group: str) -> None:
    """The tenant's group commits the current end of partition 0 on the source, as a consumer keeping up does."""
    consumer = Consumer({**config, "group.id": group, "enable.auto.commit": False})
    try:
        end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=20, cached=False)[1]
        consumer.commit(offsets=[TopicPartition(topic, 0, end)], asynchronous=False)
    finally:
        consumer.close()


def committed_positions(config: dict[str, Any], offsets_topic: str) -> dict[SourceKey, SourcePosition]:
    """What the flow's Connect offsets topic holds for MirrorSourceConnector, as Connect replays it."""
    partitions = len(admin_client(config).list_topics(offsets_topic, timeout=20).topics[offsets_topic].partitions)
    records = read_topic(config, offsets_topic, partitions, "read_committed")
    return latest_positions(RawRecord(p, o, k, v) for p, o, k, v in sorted(records))


def stopped_since(path: Path, start: int) -> bool:
    with open(path, "rb") as text:
        text.seek(start)
        return STOPPED_LINE in text.read()


@pytest.fixture(scope="module")
def rolled(stack, tmp_path_factory) -> Iterator[dict[str, Any]]:
    run = uuid.uuid4().hex[:5]
    eos, alo = f"upe{run}", f"upa{run}"  # shared brokers: fresh tenants, same source and target
    tenants = {"exactly_once": eos, "at_least_once": alo}
    root = tmp_path_factory.mktemp("mm2-upgrade")
    repo, secrets, out = root / "repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, tenants.values())
    for delivery, name in tenants.items():
        tenant_file = repo / "tenants" / f"{name}.yaml"
        tenant = yaml.safe_load(tenant_file.read_text())
        tenant["flows"][0]["delivery"] = delivery
        tenant_file.write_text(yaml.safe_dump(tenant))
    stack.export_secret_store(secrets)
    source, target = stack.kafka["source"], stack.kafka["target"]
    topics = {name: f"{name}.events" for name in tenants.values()}
    create_topics(admin_client(source.admin_config()), topics.values(), partitions=PARTITIONS)
    # A heartbeats topic the flow does not own, as Kafka's default policy names a remote one. MM2 replicates what
    # its policy calls a heartbeats topic whatever its topic filter says; before 4.0 no
    # `heartbeats.replication.enabled` turns that off, so on the 3.x MM2 only the flow's policy keeps it out.
    foreign_heartbeats = [f"hb{run}.heartbeats"]  # (not the plain `heartbeats`: the brokers are shared)
    create_topics(admin_client(source.admin_config()), foreign_heartbeats, partitions=1)
    produce(source.admin_config(), foreign_heartbeats[0], [Record(b"k", b"beat", [])])
    applied = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    generated = run_cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr

    store = DirSecretStore(secrets)
    flows = {name: flow_id(name, "source", "target") for name in tenants.values()}
    properties, apps = {}, {}
    for name, flow in flows.items():
        path = root / f"{flow}.properties"
        path.write_text(paced((out / "mm2" / f"{flow}.properties").read_text()) + "".join(
            f"{k}={v}\n" for k, v in FLUSH.items()))
        properties[name] = path
        app = f"{name}-app"
        apps[name] = {alias: stack.kafka[alias].client_config(
            app, store.get(scram_secret(alias, f"User:{app}"), "password")) for alias in ("source", "target")}

    admin = target.admin_config()
    feeder = Feeder(source.admin_config(), topics, partitions=PARTITIONS, batch=BATCH, pace=PACE_SECONDS,
                    **{"enable.idempotence": True})  # until halted
    started: list[str] = []
    facts: dict[str, dict[str, Any]] = {name: {} for name in flows}
    try:
        for name, flow in flows.items():
            stack.start_mirrormaker(flow, properties[name], kafka_version="3")
            started.append(flow)
        feeder.start()
        for name in flows:
            remote = f"source.{topics[name]}"
            wait_for(f"{ROLL_AT} records of {remote} from the 3.x MM2", lambda remote=remote: sum(
                end_offsets(admin, remote, range(PARTITIONS)).values()) >= ROLL_AT or feeder.error, 300)
            commit_at_end(apps[name]["source"], topics[name], f"{name}-readers")
            facts[name]["group_3x"] = wait_for(f"{name}-readers synced by the 3.x MM2", lambda name=name: group_offsets(
                apps[name]["target"], f"{name}-readers").get((f"source.{topics[name]}", 0)), 120)
        on_target_3x = set(admin_client(admin).list_topics(timeout=20).topics)
        heartbeats_3x = {t for t in foreign_heartbeats if f"source.{t}" in on_target_3x}
        own_syncs_3x = {flow: mm2_flow_topics(flow).offset_syncs in on_target_3x for flow in flows.values()}
        for name, flow in flows.items():  # the roll: graceful stop of 3.x, then 4.x on the same file
            log_path = MirrorMaker(flow, properties[name], stack.run_dir).log_path
            start, clock = log_path.stat().st_size, time.monotonic()
            stack.stop_mirrormaker(flow)
            started.remove(flow)
            facts[name]["stop_seconds"] = time.monotonic() - clock  # reported, never asserted
            facts[name]["graceful"] = stopped_since(log_path, start)
            remote = f"source.{topics[name]}"
            facts[name]["boundary"] = end_offsets(admin, remote, range(PARTITIONS))
            facts[name]["committed_3x"] = committed_positions(admin, connect_names(flow).offsets)
            facts[name]["produced_at_roll"] = feeder.produced
            clock = time.monotonic()
            stack.start_mirrormaker(flow, properties[name])
            started.append(flow)
            facts[name]["start_seconds"] = time.monotonic() - clock
        for name in flows:  # the tenant's group moves on the source while the 4.x MM2 runs
            commit_at_end(apps[name]["source"], topics[name], f"{name}-readers")
        rolled_at = max(facts[name]["produced_at_roll"] for name in flows)
        wait_for(f"{AFTER_ROLL} records produced after the roll", lambda: feeder.error
                 or feeder.produced >= rolled_at + AFTER_ROLL, 300)
        feeder.halt.set()
        feeder.join(120)
        assert feeder.error is None, feeder.error
        records = feeder.produced  # per tenant, values <tenant>-0 .. <tenant>-(records - 1)
        assert records >= rolled_at + AFTER_ROLL
        for name in flows:
            remote = f"source.{topics[name]}"
            wait_for(f"{remote} caught up", lambda remote=remote, name=name: len({
                r[3] for r in read_topic(admin, remote, PARTITIONS)}) >= records, 600)
            facts[name]["group_4x"] = wait_for(
                f"{name}-readers synced again by the 4.x MM2", lambda name=name: (offset := group_offsets(
                    apps[name]["target"], f"{name}-readers").get((f"source.{topics[name]}", 0))) is not None
                and offset > facts[name]["group_3x"] and offset, 120)
    finally:
        for flow in started:
            stack.stop_mirrormaker(flow)
    for name, flow in flows.items():
        facts[name]["committed_4x"] = committed_positions(admin, connect_names(flow).offsets)
        facts[name]["counts"] = replicated(source.admin_config(), admin, name, topics[name], facts[name]["boundary"],
                                           records)
    yield {"tenants": tenants, "topics": topics, "flows": flows, "facts": facts, "records": records,
           "heartbeats_3x": heartbeats_3x, "own_syncs_3x": own_syncs_3x}


def replicated(source: dict[str, Any], target: dict[str, Any], name: str, topic: str,
               boundary: dict[int, int], records: int) -> dict[str, Any]:
    """The target's remote topic (read_committed) against the source topic, counted by sequence number;
    records at or past `boundary` (the remote topic's ends when the 3.x MM2 had stopped) are the 4.x MM2's."""
    on_source = read_topic(source, topic, PARTITIONS)
    source_offset = {v: (p, o) for p, o, _, v in on_source}
    on_target = read_topic(target, f"source.{topic}", PARTITIONS)
    copies = Counter(v for *_, v in on_target)
    expected = {value(name, i) for i in range(records)}
    first_4x = {}  # per partition: the source offset of the first record the 4.x MM2 wrote
    for p, o, _, v in on_target:
        if o >= boundary[p] and p not in first_4x:
            first_4x[p] = source_offset[v]
    return {"records": len(on_target), "records_3x": sum(1 for p, o, *_ in on_target if o < boundary[p]),
            "missing": len(expected - set(copies)),
            "duplicated": sum(n - 1 for n in copies.values()), "foreign": len(set(copies) - expected),
            "first_4x": first_4x, "source_ends": end_offsets(source, topic, range(PARTITIONS))}


@pytest.mark.parametrize("delivery", ["exactly_once", "at_least_once"])
def test_the_rolled_flow_has_every_record_once(rolled, delivery):
    name = rolled["tenants"][delivery]
    facts = rolled["facts"][name]
    counts = facts["counts"]
    log.warning("%s roll at %d produced (3.x stop %.1f s, 4.x start %.1f s; 3.x wrote %d records in offsets up "
                "to %s): %s", delivery, facts["produced_at_roll"], facts["stop_seconds"], facts["start_seconds"],
                counts["records_3x"], facts["boundary"], counts)
    assert facts["graceful"], "the 3.x MM2 did not log its orderly stop"
    records = rolled["records"]
    assert facts["produced_at_roll"] < records, "the producer ended before the roll: nothing was in flight"
    assert (counts["records"], counts["missing"], counts["duplicated"], counts["foreign"]) == (
        records, 0, 0, 0), counts
    # 3.9.2's MM2 ran the flow as compiled: transactionally (commit markers take offsets) only when exactly_once
    written_3x = sum(facts["boundary"].values())
    assert 0 < counts["records_3x"] < records, counts
    assert (written_3x > counts["records_3x"]) == (delivery == "exactly_once"), (written_3x, counts)


@pytest.mark.parametrize("delivery", ["exactly_once", "at_least_once"])
def test_the_4x_mm2_resumed_where_the_3x_mm2_committed(rolled, delivery):
    name = rolled["tenants"][delivery]
    facts = rolled["facts"][name]
    counts = facts["counts"]
    topic = rolled["topics"][name]
    before = {key.partition: position.offset for key, position in facts["committed_3x"].items()
              if key.topic == topic}
    after = {key.partition: position.offset for key, position in facts["committed_4x"].items()
             if key.topic == topic}
    log.warning("%s: 3.x committed %s, 4.x first wrote source offsets %s, 4.x committed %s",
                delivery, before, counts["first_4x"], after)
    assert set(before) == set(range(PARTITIONS)) and min(before.values()) > 0, before
    # the first record the 4.x MM2 wrote to each partition is the one after the 3.x MM2's last commit
    assert counts["first_4x"] == {p: (p, before[p] + 1) for p in range(PARTITIONS)}, (counts["first_4x"], before)
    # and the same Connect offsets moved on to the last record of each source partition
    assert after == {p: counts["source_ends"][p] - 1 for p in range(PARTITIONS)}, (after, counts["source_ends"])


@pytest.mark.parametrize("delivery", ["exactly_once", "at_least_once"])
def test_group_offsets_keep_being_synced_after_the_roll(rolled, delivery):
    facts = rolled["facts"][rolled["tenants"][delivery]]
    log.warning("%s: the group's offset on the target, synced by 3.x: %d, then by 4.x: %d",
                delivery, facts["group_3x"], facts["group_4x"])
    assert 0 < facts["group_3x"] < facts["group_4x"], facts



def test_the_3x_mm2_keeps_to_the_flows_own_topics_through_its_policy(rolled):
    """Issue 24, asked of a real 3.x MM2 (the stack's last 3.x release) running the generated file: it has no
    `heartbeats.replication.enabled` (KIP-1089, Kafka 4.0), yet it copied no heartbeats topic the flow does not
    own, and it wrote each flow's own offset-syncs topic: the per-flow ReplicationPolicy (KIP-690's methods, Kafka
    3.1) is what confines it. Admission refuses a KafkaMirrorMaker2 version older than that (docs/admission.md)."""
    assert rolled["heartbeats_3x"] == set()
    assert all(rolled["own_syncs_3x"].values()), rolled["own_syncs_3x"]
