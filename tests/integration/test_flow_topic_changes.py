"""Changing a tenant's flow topics, on real brokers with a real dedicated MirrorMaker 2 (issue 16 item 4).

The runbook of docs/generate-apply.md ("Changing a flow's topics"), step by step: the tenant's flow replicates
t1 while a producer keeps writing to it; a pull request adds a pattern for t2 (an existing topic with
records); `plan --base --live` shows the pattern and the topic it starts; `apply`, `generate`, and the MM2
restarted with the new file replicates t2 within its topic refresh interval and resumes t1 from its committed
offsets (every value is unique: none arrives twice). Then the pattern for t1 is removed: `plan` says t1's
remote topic stays with its data; after apply, generate and restart, new t1 records are no longer replicated
while t2's are, and t1's remote topic still holds its records, still readable by the tenant.

Found on the real MM2: a restarted dedicated MM2 first runs its source task with the task configs stored in its
Connect config topic (the old topic list: t1 still assigned) for a second or two, until the connector has
recomputed them from the new file and the task restarts with them. So "stopped" is observed there, in the MM2's
log, before the first record that must not be copied is written (docs/generate-apply.md says so).
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from confluent_kafka import Consumer, TopicPartition

from devstack.repo import as_yaml, write_stack_repo
from governance.kafka.admin import admin_client, create_topics
from governance.kafka.records import Record, produce, read
from governance.model.names import flow_id, scram_secret
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli
from tests.integration.test_replication_policy import paced, wait_for

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

BATCH = 10
WAIT = 180  # seconds: MM2's start, its first topic refresh (5 s, paced) and replication, on a loaded machine


def values(tenant: str, topic: str, batch: str) -> list[bytes]:
    return [f"{tenant}-{topic}-{batch}-{i}".encode() for i in range(BATCH)]


def write(config: dict[str, Any], tenant: str, topic: str, batch: str) -> list[bytes]:
    sent = values(tenant, topic, batch)
    produce(config, f"{tenant}.{topic}", [Record(v, v, []) for v in sent])
    return sent


def end_offset(config: dict[str, Any], topic: str) -> int:
    consumer = Consumer({**config, "group.id": f"verify-{uuid.uuid4().hex[:8]}"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=20)[1]
    finally:
        consumer.close()


def everything(config: dict[str, Any], topic: str) -> list[bytes]:
    """Every value in the (one-partition) topic, in order, duplicates included."""
    result = read(config, topic, end_offset(config, topic), timeout=60)
    assert result.error is None, result.error
    return [r.value for r in result.records if r.value is not None]


def holds(config: dict[str, Any], topic: str, wanted: list[bytes]) -> bool:
    """True once every wanted value is in the topic."""
    try:
        return set(wanted) <= set(everything(config, topic))
    except Exception:  # noqa: BLE001 - the remote topic does not exist yet: keep waiting
        return False


REPLICATING = re.compile(r"task-thread-MirrorSourceConnector-\d+ replicating \d+ topic-partitions [^:]*: \[([^\]]*)\]")


def replicating_since(log: Path, offset: int) -> list[set[str]]:
    """The partitions each source task thread started on since `offset` of the MM2's log, in order.

    A restarted dedicated MM2 first runs its source task with the task configs stored in its Connect config
    topic (the old topic list), and only after its connector has recomputed them from the new file does it
    restart the task with them: a removed topic has stopped once a task thread started without it.
    """
    with open(log, "rb") as text:
        text.seek(offset)
        found = REPLICATING.findall(text.read().decode(errors="replace"))
    return [{p.strip() for p in partitions.split(",") if p.strip()} for partitions in found]


def set_patterns(repo: Path, tenant: str, patterns: list[str]) -> None:
    path = repo / "tenants" / f"{tenant}.yaml"
    document = yaml.safe_load(path.read_text())
    [flow] = document["flows"]
    flow["topics"] = patterns
    path.write_text(as_yaml(document))


def plan(head: Path, base: Path, secrets: Path, output_format: str = "json") -> Any:
    done = run_cli("plan", str(head), "--base", str(base), "--live", "--secrets-dir", str(secrets),
                   "--format", output_format)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if output_format == "json" else done.stdout


def roll_out(stack, repo: Path, secrets: Path, out: Path, flow: str, properties: Path, running: bool) -> None:
    """The runbook: apply, generate, and (re)start the flow's dedicated MM2 with the new file."""
    applied = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    shutil.rmtree(out, ignore_errors=True)
    generated = run_cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr
    properties.write_text(paced((out / "mm2" / f"{flow}.properties").read_text()))
    if running:
        stack.stop_mirrormaker(flow)
    stack.start_mirrormaker(flow, properties)


@pytest.fixture(scope="module")
def changes(stack, tmp_path_factory) -> Any:
    tenant = f"ftc{uuid.uuid4().hex[:5]}"  # shared brokers: a fresh tenant per run
    root = tmp_path_factory.mktemp("topic-changes")
    secrets, out = root / "secrets", root / "out"
    v1, v2, v3 = root / "v1", root / "v2", root / "v3"
    write_stack_repo(stack, v1, [tenant])
    set_patterns(v1, tenant, [rf"{tenant}\.t1"])
    stack.export_secret_store(secrets)
    source, target = stack.kafka["source"], stack.kafka["target"]
    src, dst = source.admin_config(), target.admin_config()
    create_topics(admin_client(src), [f"{tenant}.t1", f"{tenant}.t2"])
    flow = flow_id(tenant, "source", "target")
    remote1, remote2 = f"source.{tenant}.t1", f"source.{tenant}.t2"
    properties = root / f"{flow}.properties"
    seen: dict[str, Any] = {"tenant": tenant, "flow": flow, "remote1": remote1, "remote2": remote2, "dst": dst}

    t2 = write(src, tenant, "t2", "before")  # t2 exists with records before any flow replicates it
    t1 = write(src, tenant, "t1", "a")
    roll_out(stack, v1, secrets, out, flow, properties, running=False)
    try:
        t1 += write(src, tenant, "t1", "b")  # the producer keeps writing while MM2 runs
        wait_for(f"{remote1} replicated", lambda: holds(dst, remote1, t1), WAIT)
        seen["t2_before_added"] = remote2 in admin_client(dst).list_topics(timeout=10).topics

        shutil.copytree(v1, v2)  # the pull request: a pattern for t2
        set_patterns(v2, tenant, [rf"{tenant}\.t1", rf"{tenant}\.t2"])
        seen["plan_add"] = plan(v2, v1, secrets)
        t1 += write(src, tenant, "t1", "c")
        roll_out(stack, v2, secrets, out, flow, properties, running=True)
        t1 += write(src, tenant, "t1", "d")
        wait_for(f"{remote2} replicated after the pattern was added", lambda: holds(dst, remote2, t2), WAIT)
        wait_for(f"{remote1} caught up after the restart", lambda: holds(dst, remote1, t1), WAIT)
        seen["t1_sent"], seen["t1_after_add"] = list(t1), everything(dst, remote1)
        seen["t2_after_add"] = everything(dst, remote2)

        shutil.copytree(v2, v3)  # the next pull request: t1's pattern goes
        set_patterns(v3, tenant, [rf"{tenant}\.t2"])
        seen["plan_remove"] = plan(v3, v2, secrets)
        seen["plan_remove_text"] = plan(v3, v2, secrets, "text")
        log = stack.mirrormakers[flow].log_path
        offset = log.stat().st_size
        roll_out(stack, v3, secrets, out, flow, properties, running=True)
        seen["tasks_after_removal"] = wait_for(
            "the restarted MM2's source task without t1",
            lambda: (found := replicating_since(log, offset)) and found[-1] == {f"{tenant}.t2-0"} and found, WAIT)
        seen["t1_not_sent"] = write(src, tenant, "t1", "e")  # after the change: must not reach the target
        t2_new = write(src, tenant, "t2", "after")  # written after t1's batch e: once here, e would be too
        wait_for(f"{remote2} still replicated after t1's pattern was removed",
                 lambda: holds(dst, remote2, t2 + t2_new), WAIT)
        seen["t2_sent"], seen["t2_final"] = t2 + t2_new, everything(dst, remote2)
        seen["t1_final"] = everything(dst, remote1)
        store = DirSecretStore(secrets)
        app = f"{tenant}-app"
        tenant_config = target.client_config(app, store.get(scram_secret("target", f"User:{app}"), "password"))
        seen["t1_read_by_tenant"] = read(tenant_config, remote1, len(t1), timeout=60, group=f"{tenant}-verify")
    finally:
        if flow in stack.mirrormakers:
            stack.stop_mirrormaker(flow)
    return seen


def the_flow(plan_record: dict[str, Any], flow: str) -> dict[str, Any]:
    [change] = [c for c in plan_record["flows"]["topics"] if c["flow"] == flow]
    return change


def test_plan_shows_the_added_pattern_and_the_existing_topic_it_starts(changes):
    tenant, change = changes["tenant"], the_flow(changes["plan_add"], changes["flow"])
    assert change["status"] == "changed" and change["live"] is True
    assert change["patterns"] == {"added": [rf"{tenant}\.t2"], "removed": []}
    assert change["topics"] == {"started": [f"{tenant}.t2"], "stopped": []}
    assert change["remote_topics_kept"] == []
    assert changes["t2_before_added"] is False  # the flow did not replicate t2 before


def test_added_topic_is_replicated_and_the_restart_duplicates_nothing(changes):
    assert sorted(changes["t2_after_add"]) == sorted(values(changes["tenant"], "t2", "before"))
    # t1 resumed from the MM2's committed offsets: every value once, in order, across the restart
    assert changes["t1_after_add"] == changes["t1_sent"]
    assert len(set(changes["t1_after_add"])) == len(changes["t1_after_add"]) == 4 * BATCH


def test_plan_says_the_removed_topics_remote_copy_stays(changes):
    tenant, change = changes["tenant"], the_flow(changes["plan_remove"], changes["flow"])
    assert change["patterns"] == {"added": [], "removed": [rf"{tenant}\.t1"]}
    assert change["topics"] == {"started": [], "stopped": [f"{tenant}.t1"]}
    assert change["remote_topics_kept"] == [changes["remote1"]]
    assert change["remote_readers_after"] == [f"User:{tenant}-app"]
    text = changes["plan_remove_text"]
    assert f"removes pattern {tenant}\\.t1" in text
    assert f"remote topics {changes['remote1']} stay on target with their data and are no longer updated" in text
    assert "mm2gov never deletes topics" in text
    # removing a pattern from a flow that stays changes no ACL: the remote prefix comes from the tenant's prefixes
    assert changes["plan_remove"]["permissions"] == {"gained": [], "lost": []}


def test_removed_topic_stops_while_the_other_continues_and_its_remote_data_stays(changes):
    assert changes["t2_final"] == changes["t2_sent"]
    assert changes["t1_final"] == changes["t1_sent"]  # kept, every record once, and nothing of batch e
    assert not set(changes["t1_not_sent"]) & set(changes["t1_final"])
    read_back = changes["t1_read_by_tenant"]
    assert read_back.error is None and [r.value for r in read_back.records] == changes["t1_sent"]
