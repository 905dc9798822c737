"""Broker compatibility verdicts: can the pinned MirrorMaker 2 (Kafka 4.x clients) serve a flow's clusters?

Kafka 4.x clients no longer speak the protocol versions KIP-896 removed, so a broker whose newest
version of an API MM2 needs is below the client's oldest is unusable, and the failure would only show
once MM2 runs. This module holds the tables (the APIs MM2 sends, the releases that introduced their
oldest versions) and the pure verdicts (`judge`, `flow_verdicts`, `refusal`); what each broker answers
is read by `kafka/api_versions.py`, the wire edge. Also: the oldest MirrorMaker 2 release admission
accepts in a KafkaMirrorMaker2 (`mm2_version_ok`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Api:
    """One API the pinned MM2's clients send: its key, name, the oldest and newest version the
    Kafka 4.3.1 client speaks (`*RequestData.LOWEST/HIGHEST_SUPPORTED_VERSION` in kafka-clients),
    and the broker release that first answered that oldest version."""

    key: int
    name: str
    oldest: int
    newest: int
    since: str


# The APIs MM2 (dedicated mode) sends, read from kafka-clients-4.3.1.jar with javap; `since` is the
# Kafka release that introduced `oldest` (the protocol guide). OffsetForLeaderEpoch v2 (KIP-320, 2.1)
# is the newest of these floors, hence the 2.1 minimum that KIP-896 / KIP-1124 state.
APIS: tuple[Api, ...] = (
    Api(0, "Produce", 3, 13, "0.11"),
    Api(1, "Fetch", 4, 18, "0.11"),
    Api(2, "ListOffsets", 1, 11, "0.10.1"),
    Api(3, "Metadata", 0, 13, "0.8"),
    Api(8, "OffsetCommit", 2, 10, "0.9"),
    Api(9, "OffsetFetch", 1, 10, "0.8.2"),
    Api(10, "FindCoordinator", 0, 6, "0.8.2"),
    Api(11, "JoinGroup", 0, 9, "0.9"),
    Api(12, "Heartbeat", 0, 4, "0.9"),
    Api(14, "SyncGroup", 0, 5, "0.9"),
    Api(15, "DescribeGroups", 0, 6, "0.9"),
    Api(16, "ListGroups", 0, 5, "0.9"),
    Api(17, "SaslHandshake", 0, 1, "0.10"),
    Api(18, "ApiVersions", 0, 4, "0.10"),
    Api(19, "CreateTopics", 2, 7, "1.0"),
    Api(22, "InitProducerId", 0, 6, "0.11"),
    Api(23, "OffsetForLeaderEpoch", 2, 4, "2.1"),
    Api(24, "AddPartitionsToTxn", 0, 5, "0.11"),
    Api(26, "EndTxn", 0, 5, "0.11"),
    Api(28, "TxnOffsetCommit", 0, 5, "0.11"),
    Api(29, "DescribeAcls", 1, 3, "2.0"),
    Api(32, "DescribeConfigs", 1, 4, "1.1"),
    Api(36, "SaslAuthenticate", 0, 2, "1.0"),
    Api(37, "CreatePartitions", 0, 3, "1.0"),
)
# Both ends: connection, metadata and consumption (MM2 reads the source's records, and in dedicated mode
# its Connect workers read their config/offset/status topics and the offset syncs back on the target).
# The source: admin reads of groups, configs and ACLs. The target: the (transactional) producer, topic
# creation and the group offset sync. (Topic config sync's IncrementalAlterConfigs, 2.3, is not required:
# MM2 falls back to AlterConfigs when the broker lacks it, `use.incremental.alter.configs=requested`.)
COMMON = frozenset({"ApiVersions", "SaslHandshake", "SaslAuthenticate", "Metadata", "FindCoordinator", "Fetch",
                    "ListOffsets", "OffsetForLeaderEpoch", "OffsetFetch", "DescribeConfigs"})
SOURCE = COMMON | {"ListGroups", "DescribeGroups", "DescribeAcls"}
TARGET = COMMON | {"Produce", "InitProducerId", "AddPartitionsToTxn", "EndTxn", "TxnOffsetCommit", "OffsetCommit",
                   "CreateTopics", "CreatePartitions", "JoinGroup", "SyncGroup", "Heartbeat", "DescribeGroups"}
ROLES = {"source": SOURCE, "target": TARGET}

# MetadataVersion feature levels -> names, from Kafka 4.3.1's own enum (org.apache.kafka.server.common.MetadataVersion).
METADATA_VERSIONS = {7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0",
                     13: "3.6-IV1", 14: "3.6-IV2", 15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3",
                     19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0", 22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2",
                     25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1", 28: "4.2-IV0", 29: "4.2-IV1", 30: "4.3-IV0",
                     31: "4.4-IV0"}

@dataclass(frozen=True)
class BrokerVersions:
    """What one broker answered: API key -> (min, max) version, and its finalized features."""

    address: str
    apis: Mapping[int, tuple[int, int]]
    features: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """One cluster in one role: `problems` empty means the pinned MM2 can serve it."""

    cluster: str
    role: str
    version: str
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        if self.ok:
            return f"cluster {self.cluster} ({self.role}): {self.version}, compatible with the pinned MM2"
        return (f"cluster {self.cluster} ({self.role}, {self.version}) cannot be served by the pinned MM2 "
                f"(Kafka 4.x clients): {'; '.join(self.problems)}")


def minimum_release(apis: Iterable[Api] = APIS, role: str = "source") -> str:
    """The oldest broker release that answers every API `role` needs at the client's oldest version."""
    needed = [api.since for api in apis if api.name in ROLES[role]]
    return max(needed, key=lambda release: tuple(int(part) if part.isdigit() else 1 << 30
                                                  for part in release.split(".")))


def describe(brokers: Iterable[BrokerVersions]) -> str:
    """What the cluster is, in words: its metadata.version when it reports one."""
    levels = {b.features.get("metadata.version") for b in brokers} - {None}
    if not levels:
        return "no metadata.version (ZooKeeper-era or pre-3.3 broker)"
    level = min(lv for lv in levels if lv is not None)
    known = sorted(METADATA_VERSIONS)
    name = METADATA_VERSIONS.get(level) or (f"older than {METADATA_VERSIONS[known[0]]}" if level < known[0]
                                            else f"newer than {METADATA_VERSIONS[known[-1]]}")
    return f"metadata.version {name} (level {level})"


def judge(cluster: str, role: str, brokers: Iterable[BrokerVersions], apis: tuple[Api, ...] | None = None) -> Verdict:
    """Every broker of `cluster` must answer every API `role` needs within the client's version range (`apis`:
    the table APIS unless given, looked up when called)."""
    apis = APIS if apis is None else apis
    brokers = list(brokers)
    problems: list[str] = []
    too_old = not brokers
    if not brokers:
        problems.append("no broker answered ApiVersions")
    for broker in brokers:
        for api in apis:
            if api.name not in ROLES[role]:
                continue
            found = broker.apis.get(api.key)
            if found is None or found[1] < api.oldest:
                answered = "lacks it" if found is None else f"answers up to v{found[1]}"
                problems.append(f"broker {broker.address} {answered} for {api.name}, MM2 needs v{api.oldest}+")
                too_old = True
            elif found[0] > api.newest:
                problems.append(f"broker {broker.address} answers {api.name} from v{found[0]}, MM2 speaks up to "
                                f"v{api.newest}")
    if too_old:
        problems.append(f"minimum broker version: Kafka {minimum_release(apis, role)} (KIP-896)")
    return Verdict(cluster, role, describe(brokers), tuple(problems))


def flow_verdicts(flows: Iterable[tuple[str, str]], evidence: Mapping[str, list[BrokerVersions]],
                  apis: tuple[Api, ...] | None = None) -> list[Verdict]:
    """One verdict per cluster and role over every (source, target) pair; a cluster in both roles gets two."""
    flows = list(flows)
    roles = sorted({(source, "source") for source, _ in flows} | {(target, "target") for _, target in flows})
    return [judge(cluster, role, evidence.get(cluster, []), apis) for cluster, role in roles]


def refusal(verdicts: Iterable[Verdict]) -> str | None:
    """The message that refuses the run (one line per cluster that cannot be served), or None."""
    lines = [verdict.line() for verdict in verdicts if not verdict.ok]
    return "\n".join(lines) or None


# -- the edge: one ApiVersions request per broker ------------------------------------------------------

# ---- the MirrorMaker 2 release a KafkaMirrorMaker2 runs (admission) ----------------------------------------

# The oldest MirrorMaker 2 whose ReplicationPolicy names its own offset-syncs, checkpoints and heartbeats topics
# (KIP-690, Kafka 3.1): mm2gov's per-flow policy (replication-policy/) keeps each flow to its own topics through
# those methods, and test_mm2_upgrade shows a 3.x MM2 copying no heartbeats topic the flow does not own although
# it has no `heartbeats.replication.enabled` (KIP-1089, Kafka 4.0). An older MM2 ignores the methods and shares
# `mm2-offset-syncs.<alias>.internal`, `<alias>.checkpoints.internal` and `heartbeats` between every flow of two
# clusters: test_mm2_version_boundary runs the generated file on real 3.0.2 and 3.1.1 MM2s and sees exactly that.
MIN_MM2_VERSION = (3, 1)


def mm2_version_ok(version: object) -> bool:
    """Whether a KafkaMirrorMaker2's `spec.version` names a Kafka release at or after MIN_MM2_VERSION
    ("4.1.0", "3.9.1"); anything else (older, not a version) is not."""
    if not isinstance(version, str):
        return False
    parts = version.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return False
    return (int(parts[0]), int(parts[1])) >= MIN_MM2_VERSION
