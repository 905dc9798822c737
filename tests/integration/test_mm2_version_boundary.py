"""The oldest MirrorMaker 2 admission accepts (MIN_MM2_VERSION, governance/kafka/version.py), observed on real MM2s.

mm2gov keeps each flow to its own internal topics through its ReplicationPolicy (replication-policy/,
io.mm2gov.replication.FlowReplicationPolicy): `offsetSyncsTopic`, `checkpointsTopic`, `heartbeatsTopic`,
`isHeartbeatsTopic`..., the methods KIP-690 gave the policy in Kafka 3.1; admission refuses a KafkaMirrorMaker2
whose `spec.version` is older. Here the MM2s of the releases either side of that boundary (versions.env:
KAFKA_MM2_BELOW_MIN_VERSION 3.0.2, KAFKA_MM2_AT_MIN_VERSION 3.1.1; install/legacy-mm2.sh) each run a flow file
exactly as `mm2gov generate` writes it (MM2's intervals shortened), and the module records which internal topics
each one created or wrote on the two clusters, and whether it copied a topic named like a heartbeats topic that
the flow does not own. The product's constant is tied to what was seen: `mm2_version_ok(version)` is "this MM2
kept to the flow's own topics". (3.1.0's connect-mirror was never published on Maven Central; 3.1.1's one MM2
change since, KAFKA-13255, is about remote topics' configs, not internal topic names.)

Each release runs its own tenant's flow under the stack admin's credentials substituted for the flow's: the ACLs
`mm2gov apply` grants would simply deny an older MM2 the shared names, which would hide which names it uses. The
question is which names the MM2 *release* uses under the generated policy settings, not what the ACLs allow.

The brokers are shared with the other modules of the worker, which may have left Kafka's shared names
(`heartbeats`, `mm2-offset-syncs.source.internal`, ...) behind. A name counts as used by a run when the run
created it or wrote to it (its end offsets grew while only this MM2 ran), so a leftover can neither hide a use nor
fake one; each run deletes the topics it created once it is over, so the other release never sees them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import javaproperties
import pytest
import yaml
from confluent_kafka import KafkaException

from devstack.repo import write_stack_repo
from devstack.tools import mm2_boundary_versions
from governance.compile.mm2 import SCRAM_MODULE, jaas_quoted
from governance.kafka.admin import admin_client, create_topics
from governance.kafka.records import Record, produce
from governance.kafka.version import MIN_MM2_VERSION, mm2_version_ok
from governance.model.names import (
    PASSWORD_KEY,
    REPLICATION_POLICY_CLASSES,
    USERNAME_KEY,
    Mm2FlowTopics,
    flow_id,
    mm2_flow_topics,
    mm2_internal_prefix,
    remote_name,
)
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli
from tests.integration.test_mm2_upgrade import commit_at_end
from tests.integration.test_replication_policy import paced, topics_of
from tests.tools.offsets import total_end_offset
from tests.tools.wait import wait_for

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

log = logging.getLogger(__name__)

BELOW, AT = mm2_boundary_versions()
SOURCE, TARGET = "source", "target"
# One partition, three records: MM2 writes an offset sync for the first record of a partition, and the tenant
# group's commit at the end of it gives a checkpoint to write; each kind of internal topic is then written once
# at least, which is all the observation needs (more records would only take longer).
RECORDS = 3
KINDS = tuple(field.name for field in fields(Mm2FlowTopics))  # offset_syncs, checkpoints, heartbeats


def kafka_names(source: str, target: str) -> dict[str, tuple[str, ...]]:
    """MM2's internal topic names before KIP-690, by kind: hard-coded in 3.0's MirrorConnectorConfig and
    MirrorClientConfig (`mm2-offset-syncs.<other alias>.internal` on either cluster, as offset-syncs.topic.location
    says; `<source>.checkpoints.internal`; `heartbeats`), shared by every flow between the same clusters. Both
    aliases' forms are watched on both clusters: a name anywhere outside the flow's space is what matters."""
    return {"offset_syncs": (f"mm2-offset-syncs.{target}.internal", f"mm2-offset-syncs.{source}.internal"),
            "checkpoints": (f"{source}.checkpoints.internal", f"{target}.checkpoints.internal"),
            "heartbeats": ("heartbeats",)}


SHARED = kafka_names(SOURCE, TARGET)
WATCHED = tuple(name for names in SHARED.values() for name in names)
# What each release did, as first observed here (2026-11-25) and asserted exactly since: the (cluster, topic) shared
# names it created or wrote (3.0.2: its MirrorConnectorConfig's hard-coded names, offset syncs on the target as
# offset-syncs.topic.location=target says), and whether it copied the planted heartbeats-named topic
EXPECTED_SHARED = {
    BELOW: {(TARGET, "mm2-offset-syncs.source.internal"), (TARGET, "source.checkpoints.internal"),
            (TARGET, "heartbeats")},
    AT: set(),
}
EXPECTED_FOREIGN_HEARTBEATS = {BELOW: True, AT: False}


def minor(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2])


def own_names(flow: str) -> dict[str, str]:
    """The flow's own internal topics by kind (names.mm2_flow_topics), which its policy names them from."""
    return asdict(mm2_flow_topics(flow))


@dataclass(frozen=True)
class Snapshot:
    """What one cluster held at a moment: its topic names, and the end offsets of the shared names it has."""

    topics: frozenset[str]
    sizes: dict[str, int]


def snapshot(config: dict[str, Any]) -> Snapshot:
    topics = frozenset(topics_of(config))
    return Snapshot(topics, {name: total_end_offset(config, name) for name in WATCHED if name in topics})


def used(before: Snapshot, now: Snapshot, name: str) -> bool:
    """Created since `before`, or written since (its end offsets grew): a leftover only counts when it grew."""
    return name in now.topics and (name not in before.topics or now.sizes.get(name, 0) > before.sizes.get(name, 0))


@dataclass(frozen=True)
class Observation:
    version: str
    flow: str
    remote: str  # the tenant topic's remote topic on the target
    planted: str  # a heartbeats-named topic on the source that the flow does not own
    replicated: int  # the tenant's records on the target
    created: dict[str, frozenset[str]]  # per cluster, every topic that appeared while this MM2 ran
    shared: frozenset[tuple[str, str]]  # (cluster, name) of Kafka's shared names it created or wrote
    log: str

    @property
    def own(self) -> frozenset[str]:
        """The flow's own offset-syncs, checkpoints and heartbeats topics it created on the target."""
        return frozenset(own_names(self.flow).values()) & self.created[TARGET]

    @property
    def outside(self) -> dict[str, frozenset[str]]:
        """What it created outside the flow's space: on the target anything but `mm2gov.<flow>.*` and the tenant
        topic's remote copy, on the source anything at all (the generated file writes nothing there)."""
        space = mm2_internal_prefix(self.flow)
        return {TARGET: frozenset(t for t in self.created[TARGET] if not t.startswith(space) and t != self.remote),
                SOURCE: self.created[SOURCE]}

    @property
    def copied_foreign_heartbeats(self) -> bool:
        return remote_name("default", SOURCE, self.planted) in self.created[TARGET]

    @property
    def kept_to_its_own_topics(self) -> bool:
        """All three of the flow's own topics, no shared name, nothing else outside the flow's space."""
        return (self.own == set(own_names(self.flow).values()) and not self.shared
                and not any(self.outside.values()))

    def summary(self) -> str:
        outside = {alias: sorted(topics) for alias, topics in self.outside.items()}
        return (f"MM2 {self.version}: {self.replicated} records replicated; own topics {sorted(self.own)}; shared "
                f"names used {sorted(self.shared)}; created outside the flow's space {outside}; copied "
                f"{self.planted}: {self.copied_foreign_heartbeats}")


def as_stack_admin(properties: dict[str, str], repo: Path, secrets: Path) -> dict[str, str]:
    """The flow's properties with each cluster's SASL login replaced by the stack admin's (the cluster's
    `admin_credentials_secret` in the repo), the password still a reference the file's own provider reads."""
    clusters = yaml.safe_load((repo / "clusters.yaml").read_text())["clusters"]
    store = DirSecretStore(secrets)
    logins = {}
    for alias in (SOURCE, TARGET):
        secret = clusters[alias]["security"]["admin_credentials_secret"]
        user = store.get(secret, USERNAME_KEY).reveal()
        logins[f"{alias}.sasl.jaas.config"] = (f'{SCRAM_MODULE} required username="{jaas_quoted(user)}" '
                                               f'password="${{dir:{secrets}/{secret}:{PASSWORD_KEY}}}";')
    assert set(logins) <= set(properties), "the generated file has no SASL login to replace"
    return properties | logins


@pytest.fixture(scope="module")
def boundary_repo(stack, tmp_path_factory) -> dict[str, Any]:
    """One tenant per release (shared brokers: fresh names), applied and generated once; each tenant's topic
    holds RECORDS records and its group has committed their end."""
    run = uuid.uuid4().hex[:5]
    tenants = {version: f"vb{version.replace('.', '')}{run}" for version in (BELOW, AT)}
    root = tmp_path_factory.mktemp("mm2-version-boundary")
    repo, secrets, out = root / "repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, tenants.values())
    stack.export_secret_store(secrets)
    source = stack.kafka[SOURCE].admin_config()
    topics = {version: f"{tenant}.events" for version, tenant in tenants.items()}
    create_topics(admin_client(source), topics.values())
    for version, topic in topics.items():
        produce(source, topic, [Record(f"k{i}".encode(), f"v{i}".encode(), []) for i in range(RECORDS)])
        commit_at_end(source, topic, f"{tenants[version]}-readers")
    applied = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    generated = run_cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr
    properties = {}
    for version, tenant in tenants.items():
        flow = flow_id(tenant, SOURCE, TARGET)
        text = (out / "mm2" / f"{flow}.properties").read_text()
        assert javaproperties.loads(text)["replication.policy.class"] == REPLICATION_POLICY_CLASSES["default"]
        path = root / f"{flow}.properties"
        path.write_text(javaproperties.dumps(as_stack_admin(javaproperties.loads(paced(text)), repo, secrets),
                                             timestamp=False))
        properties[version] = path
    return {"run": run, "tenants": tenants, "topics": topics, "properties": properties}


def run_release(stack, boundary_repo: dict[str, Any], version: str) -> Observation:
    """Run `version`'s MM2 on its tenant's flow until the tenant's records are on the target and each kind of
    internal topic was written under some name (the flow's or Kafka's), then stop it and see what it did."""
    tenant, topic = boundary_repo["tenants"][version], boundary_repo["topics"][version]
    flow = flow_id(tenant, SOURCE, TARGET)
    own = own_names(flow)
    remote = remote_name("default", SOURCE, topic)
    configs = {alias: stack.kafka[alias].admin_config() for alias in (SOURCE, TARGET)}
    # a remote heartbeats topic as Kafka's policy names one, planted for this run only: MM2 copies what its policy
    # calls a heartbeats topic whatever the flow's topic filter says (3.x has no heartbeats.replication.enabled)
    planted = f"vbhb{boundary_repo['run']}x{version.replace('.', '')}.heartbeats"
    create_topics(admin_client(configs[SOURCE]), [planted])
    produce(configs[SOURCE], planted, [Record(b"k", b"beat", [])])
    running = sorted(name for name, alive in stack.running().items() if alive and name.startswith("mm2-"))
    assert not running, f"another MM2 writes on these brokers, the observation would be its too: {running}"
    before = {alias: snapshot(config) for alias, config in configs.items()}
    assert not {remote, remote_name("default", SOURCE, planted)} & before[TARGET].topics

    def settled() -> bool:
        try:
            if total_end_offset(configs[TARGET], remote) < RECORDS:
                return False
            now = {alias: snapshot(config) for alias, config in configs.items()}
        except KafkaException:  # a topic MM2 is creating has no leader yet
            return False
        return all(own[kind] in now[TARGET].topics or any(
            used(before[alias], now[alias], name) for alias in now for name in SHARED[kind]) for kind in KINDS)

    mm2 = stack.start_mirrormaker(flow, boundary_repo["properties"][version], kafka_version=version)
    try:
        wait_for(f"MM2 {version}: {RECORDS} records of {remote} and each kind of internal topic", settled, 120,
                 interval=0.5)
    finally:
        stack.stop_mirrormaker(flow)
    after = {alias: snapshot(config) for alias, config in configs.items()}
    return Observation(
        version=version, flow=flow, remote=remote, planted=planted,
        replicated=total_end_offset(configs[TARGET], remote),
        created={alias: after[alias].topics - before[alias].topics for alias in configs},
        shared=frozenset((alias, name) for alias in configs for name in WATCHED
                         if used(before[alias], after[alias], name)),
        log=Path(mm2.log_path).read_text(errors="replace"))


def delete_created(stack, observation: Observation) -> None:
    """Delete what the run created (and the topic it planted): the other release, and the other modules of the
    worker, find the brokers as they were. Kafka's shared names are deleted only when this run created them."""
    doomed = {SOURCE: {*observation.created[SOURCE], observation.planted}, TARGET: set(observation.created[TARGET])}
    for alias, topics in doomed.items():
        if not topics:
            continue
        config = stack.kafka[alias].admin_config()
        admin = admin_client(config)  # held until the futures are answered: a dropped client cancels them
        for future in admin.delete_topics(sorted(topics), operation_timeout=30).values():
            future.result()
        wait_for(f"the run's topics gone from {alias}", lambda config=config, topics=topics: not (
            topics & topics_of(config)), 60)


@pytest.fixture(scope="module")
def releases(stack, boundary_repo) -> Callable[[str], Observation]:
    """One MM2 start per release, on the first test that asks, whatever order the tests run in; its topics are
    deleted as soon as it is observed, before the other release runs."""
    seen: dict[str, Observation] = {}

    def observe(version: str) -> Observation:
        if version not in seen:
            seen[version] = run_release(stack, boundary_repo, version)
            log.warning("%s", seen[version].summary())
            delete_created(stack, seen[version])
        return seen[version]

    return observe


@pytest.fixture(params=[BELOW, AT], ids=lambda version: f"mm2-{version}")
def observed(request, releases) -> Observation:
    return releases(request.param)


def test_the_pinned_releases_straddle_the_minimum() -> None:
    """The two releases are the last minor before MIN_MM2_VERSION and MIN_MM2_VERSION's own minor."""
    assert minor(AT) == MIN_MM2_VERSION
    assert minor(BELOW) == (MIN_MM2_VERSION[0], MIN_MM2_VERSION[1] - 1)


def test_each_mm2_replicated_the_tenants_records_with_the_flows_policy(observed: Observation) -> None:
    assert observed.replicated >= RECORDS, observed.summary()
    assert f"Kafka version: {observed.version}" in observed.log  # that release's jars, not the pinned 4.x
    assert "io.mm2gov.replication.FlowReplicationPolicy" in observed.log


def test_the_shared_names_each_mm2_used(observed: Observation) -> None:
    """3.1 names its offset-syncs, checkpoints and heartbeats topics through the flow's policy: only the flow's own.
    3.0 ignores those policy methods and writes Kafka's hard-coded names, which every flow of the clusters shares."""
    assert observed.shared == EXPECTED_SHARED[observed.version], observed.summary()
    if not EXPECTED_SHARED[observed.version]:
        assert observed.own == set(own_names(observed.flow).values()), observed.summary()


def test_a_heartbeats_topic_the_flow_does_not_own_is_copied_only_below_the_minimum(observed: Observation) -> None:
    """3.0 asks no policy whether a topic is a heartbeats topic (MirrorSourceConnector.isHeartbeatTopic compares
    `originalTopic` with `heartbeats`); 3.1 asks the flow's, which knows only the flow's own."""
    assert observed.copied_foreign_heartbeats == EXPECTED_FOREIGN_HEARTBEATS[observed.version], observed.summary()


def test_admission_accepts_exactly_the_mm2_that_kept_to_the_flows_own_topics(observed: Observation) -> None:
    """The product's boundary (MIN_MM2_VERSION, read by admission's admission_mm2_version) against what this MM2 did."""
    assert mm2_version_ok(observed.version) == observed.kept_to_its_own_topics, observed.summary()
