"""MirrorMaker 2's settings for a tenant flow, declared once: key, value, why, and where each applies.

Every flow gets its own MM2, and these settings keep it to that flow (FIELD.md pitfalls 1 and 4,
ARCHITECTURE.md "Isolation by construction"). Three readers and no copy:

- the dedicated-mode .properties writer (compile/mm2.py): every entry with `properties`, in its
  section of the file, under its scope (`<source>-><target>.`, `<target>.`, ...);
- the Strimzi writer (compile/strimzi.py): every entry into the KafkaMirrorMaker2 configs `strimzi`
  names (source connector, checkpoint connector, Connect worker);
- admission (policies/mm2gov/admission/mirrormaker_settings.rego), which gets the table as data in the
  repo document (policy/input.py, `mm2_settings`) and holds a KafkaMirrorMaker2's configs to the
  entries' `admission`: required, or only compared when set; keys the table places in a config are
  on that config's allow-list.

`SETTINGS` holds the constant entries, and those whose value is derived from the flow's capacity
(`per_flow`, one function in model/capacity.py; `value` is then what a flow without capacity gets);
`flow_settings` the few whose value is the flow's own (its replication policy class, the `mm2gov.flow.*`
keys naming its MM2 topics), which admission holds to the flow's data in the repo document instead
(`replication_policy_class`, `mm2_policy_config`).

Order: the Strimzi writer keeps this order in each config, the .properties writer groups by section
and keeps this order within one (each feature's topic replication factor sits beside the feature).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum, StrEnum

from governance.model import capacity, names
from governance.model.tenancy import Flow


class Section(Enum):
    """Where the dedicated-mode .properties file writes an entry (compile/mm2.py lays the sections out)."""

    POLICY = "policy"  # after the flow's topics and groups, with its replication policy
    ISOLATION = "isolation"  # after the flow's own Connect group and topics
    EXACTLY_ONCE = "exactly_once"  # KIP-618, `delivery: exactly_once` flows only
    INTERNAL_REST = "internal_rest"  # KIP-710, flows run by several nodes or exactly once (Flow.internal_rest)
    OFFSETS = "offsets"  # offset syncs and checkpoints, after the flow's `mm2gov.flow.*` keys
    HEARTBEATS = "heartbeats"
    MIRRORING = "mirroring"  # how topics are mirrored and measured
    REPLICATION_FACTORS = "replication_factors"


class Scope(Enum):
    """How the .properties file scopes an entry's key (MirrorMakerConfig's prefixes)."""

    TOP = "top"  # the key as is
    PAIR = "pair"  # `<source>-><target>.key`: the flow's replication only
    REVERSE = "reverse"  # `<target>-><source>.key`: the direction the flow does not run
    SOURCE = "source"  # `<source>.key`: the clients of the source cluster
    TARGET = "target"  # `<target>.key`: the target cluster, where the Connect worker runs

    def key(self, key: str, source: str, target: str) -> str:
        prefix = {Scope.TOP: "", Scope.PAIR: f"{source}->{target}.", Scope.REVERSE: f"{target}->{source}.",
                  Scope.SOURCE: f"{source}.", Scope.TARGET: f"{target}."}[self]
        return prefix + key


class Config(StrEnum):
    """A config map of a KafkaMirrorMaker2 (its `spec.mirrors[].<connector>.config`, or the worker's)."""

    SOURCE = "sourceConnector"
    CHECKPOINT = "checkpointConnector"
    HEARTBEAT = "heartbeatConnector"  # Strimzi v1 has none; admission still reads v1beta2's
    WORKER = "worker"  # the Connect cluster's: spec.target.config (v1beta2: its spec.clusters[] entry)


# The admission rules that report a config breaking an entry (docs/admission.md lists them).
SYNC_TOPIC_ACLS_RULE = "admission_mm2_sync_topic_acls"
OFFSET_SYNCS_LOCATION_RULE = "admission_mm2_offset_syncs_location"
REPLICATION_POLICY_RULE = "admission_mm2_replication_policy"
DELIVERY_RULE = "admission_mm2_delivery"


@dataclass(frozen=True)
class InProperties:
    """An entry in the dedicated-mode file: its section, its scope, and comment lines written above it."""

    section: Section
    scope: Scope = Scope.TOP
    comment: tuple[str, ...] = ()


@dataclass(frozen=True)
class Held:
    """One config admission holds to the entry's value. `required`: unset is refused too (else only a value
    that is set is compared). `unless_false`: not while this switch of the same config is false (the
    feature that reads the key is off)."""

    config: Config
    required: bool = True
    unless_false: str | None = None


@dataclass(frozen=True)
class Admission:
    """What admission makes of an entry: the rule that reports a breach, the configs it holds, whether the
    value is compared exactly (else as Kafka reads switches and enums: case and blanks ignored), and for an
    exactly-once entry the one value another flow's config may set (`off`; unset is fine too)."""

    rule: str
    held: tuple[Held, ...]
    exact: bool = False
    off: str | None = None


@dataclass(frozen=True)
class Setting:
    """One MirrorMaker 2 setting: `value` is written as is into Strimzi's configs (an int stays a number
    there) and as text into the .properties file."""

    key: str
    value: str | int
    why: str
    properties: InProperties | None = None  # None: not in the dedicated-mode file
    strimzi: tuple[Config, ...] = ()  # the KafkaMirrorMaker2 configs it is written into
    admission: Admission | None = None  # None: admission only allow-lists the key where `strimzi` puts it
    exactly_once: bool = False  # for `delivery: exactly_once` flows only
    internal_rest: bool = False  # for flows whose MM2 runs its internal REST server only (Flow.internal_rest)
    per_flow: Callable[[Flow], str | int] | None = None  # the flow's value (`value`: a flow without capacity's)

    def for_flow(self, flow: Flow) -> Setting:
        """The entry with the flow's value, when it has one of its own (`per_flow`)."""
        return self if self.per_flow is None else replace(self, value=self.per_flow(flow))

    def properties_key(self, source: str, target: str) -> str:
        assert self.properties is not None
        return self.properties.scope.key(self.key, source, target)

    def to_input(self) -> dict[str, object]:
        """The entry as admission reads it from the repo document (`mm2_settings`)."""
        held = self.admission.held if self.admission else ()
        return {
            "key": self.key, "value": self.value, "why": self.why, "exactly_once": self.exactly_once,
            "written": [config.value for config in self.strimzi],
            "rule": self.admission.rule if self.admission else "",
            "exact": self.admission.exact if self.admission else False,
            "off": self.admission.off if self.admission else None,
            "held": {h.config.value: {"required": h.required, "unless_false": h.unless_false} for h in held},
        }


SOURCE, CHECKPOINT, HEARTBEAT, WORKER = Config.SOURCE, Config.CHECKPOINT, Config.HEARTBEAT, Config.WORKER
RF = InProperties(Section.REPLICATION_FACTORS)
EXACTLY_ONCE_WHY = ("the target's Connect worker commits each batch with its source offsets in one transaction "
                    "(KIP-618), under the transactional ids mm2gov grants exactly_once flows only")
TRANSACTION_RECORDS_WHY = (
    "an exactly_once flow commits one transaction per poll, and each commit costs a few round trips whatever it "
    "carries: with Kafka's 500 records a poll the commits, not the copying, bound a catch-up; a poll of a quarter "
    "second of the task's catch-up rate (model/capacity.py transaction_records) makes them a small share of it, "
    "and a paced feed still commits what each poll found, so no latency is added")


def transaction_records(flow: Flow) -> int:
    return capacity.transaction_records(flow.capacity)


READ_COMMITTED_WHY = ("an exactly_once flow reads committed records only, or records of aborted transactions "
                      "would be copied")
REBALANCE_DELAY_MS = 10_000  # scheduled.rebalance.max.delay.ms of a flow whose MM2 runs its internal REST server

PLUGIN_DISCOVERY = "service_load"  # also the stack's own MM2s (devstack/mirrormaker.py)
DISCOVERY_WHY = ("Connect finds MM2's connectors from their ServiceLoader manifests (KIP-898) instead of scanning "
                 "every class of the classpath, 3-9 s of a CPU per scan on the stack's MM2 (its log, 2026-11-27); what "
                 "Strimzi's own examples set")

SETTINGS: tuple[Setting, ...] = (
    Setting("replication.factor", -1, "the remote topics MM2 creates get the target brokers' default replication "
            "factor", RF, (SOURCE,)),
    Setting("config.storage.replication.factor", -1, "the brokers' default replication factor for the flow's "
            "Connect configs topic", RF, (WORKER,)),
    Setting("offset.storage.replication.factor", -1, "the brokers' default replication factor for the flow's "
            "Connect offsets topic", RF, (WORKER,)),
    Setting("status.storage.replication.factor", -1, "the brokers' default replication factor for the flow's "
            "Connect status topic", RF, (WORKER,)),
    Setting("replication.policy.separator", names.REMOTE_SEPARATOR,
            "mm2gov's remote-topic prefixes and ACLs are '<source>.': another separator names remote topics "
            "outside them", InProperties(Section.POLICY),
            admission=Admission(REPLICATION_POLICY_RULE, (Held(SOURCE, required=False),
                                                          Held(CHECKPOINT, required=False),
                                                          Held(HEARTBEAT, required=False)), exact=True)),
    Setting("sync.topic.acls.enabled", "false",
            "with MM2's default (true) it copies the source's topic ACLs to the target, outside the ACLs mm2gov "
            "declares and reviews", InProperties(Section.ISOLATION), (SOURCE,),
            Admission(SYNC_TOPIC_ACLS_RULE, (Held(SOURCE), Held(CHECKPOINT, required=False),
                                             Held(HEARTBEAT, required=False)))),
    Setting("sync.topic.configs.enabled", "true", "remote topics keep their source topics' configs",
            InProperties(Section.MIRRORING), (SOURCE,)),
    Setting("emit.offset-syncs.enabled", "true", "the checkpoint connector translates the tenant's group offsets "
            "from these offset syncs", InProperties(Section.OFFSETS), (SOURCE,)),
    Setting("offset-syncs.topic.location", "target",
            "on the source (MM2's default) MM2 writes offset syncs where the flow may write nothing, not into "
            "the flow's own topic on the target", InProperties(Section.OFFSETS), (SOURCE, CHECKPOINT),
            Admission(OFFSET_SYNCS_LOCATION_RULE, (Held(SOURCE, unless_false="emit.offset-syncs.enabled"),
                                                   Held(CHECKPOINT, unless_false="emit.checkpoints.enabled")))),
    Setting("offset-syncs.topic.replication.factor", -1, "the brokers' default replication factor for the "
            "flow's offset-syncs topic", RF, (SOURCE, CHECKPOINT)),
    Setting("emit.checkpoints.enabled", "true", "checkpoints carry the tenant's group offsets to the target, "
            "in the flow's own topic", InProperties(Section.OFFSETS), (CHECKPOINT,)),
    Setting("checkpoints.topic.replication.factor", -1, "the brokers' default replication factor for the "
            "flow's checkpoints topic", RF, (CHECKPOINT,)),
    Setting("sync.group.offsets.enabled", "true", "the tenant's groups resume on the target where they left "
            "off on the source", InProperties(Section.OFFSETS, comment=(
                "The tenant's groups (the groups pattern) get their translated offsets on the target.",)),
            (CHECKPOINT,)),
    Setting("emit.heartbeats.enabled", "true", "heartbeats into the flow's own topic on the target: its liveness",
            InProperties(Section.HEARTBEATS)),
    Setting("emit.heartbeats.enabled", "false", "the reverse direction's heartbeats herder would write into the "
            "source", InProperties(Section.HEARTBEATS, Scope.REVERSE)),
    # Kafka 3.9's MM2 accepts every key of the file, the exactly-once ones included, and ignores this one (4.0+):
    # harmless there, the only heartbeats topic the flow's policy knows is its own (or a remote copy), reserved
    # names its MM2 may not read on the source (docs/generate-apply.md, "Upgrading a flow's MirrorMaker 2";
    # tests/integration/test_mm2_upgrade.py runs the file on 3.9.2's MM2).
    Setting("heartbeats.replication.enabled", "false", "MM2 replicates any topic named heartbeats whatever the "
            "topic filter says (KIP-1089)", InProperties(Section.HEARTBEATS, comment=(
                "MM2 replicates any topic named heartbeats whatever the topic filter says (KIP-1089); not this one.",
            )), (SOURCE,)),
    Setting("heartbeats.topic.replication.factor", -1, "the brokers' default replication factor for the flow's "
            "heartbeats topic", RF),
    Setting("refresh.topics.interval.seconds", 30, "how soon a new topic the flow's patterns match is mirrored",
            InProperties(Section.MIRRORING), (SOURCE,)),
    Setting("metric.reporters", "org.apache.kafka.common.metrics.JmxReporter",
            "Kafka 4 registers MM2's replication metrics (kafka.connect.mirror) only with an explicit JMX reporter",
            InProperties(Section.MIRRORING, comment=(
                "Kafka 4 registers MM2's replication metrics (kafka.connect.mirror) only with an explicit JMX "
                "reporter.",))),
    # Both scopes, as MM2's own log shows: the top-level key reaches the scan MirrorMaker makes for itself, the
    # target's the Connect worker of the flow's herder (built from the target cluster's keys); with either alone
    # one scan still reads every class of the classpath.
    Setting("plugin.discovery", PLUGIN_DISCOVERY, DISCOVERY_WHY, InProperties(Section.MIRRORING)),
    Setting("plugin.discovery", PLUGIN_DISCOVERY, DISCOVERY_WHY, InProperties(Section.MIRRORING, Scope.TARGET),
            (WORKER,)),
    # KIP-618, `delivery: exactly_once` flows only. In dedicated mode `exactly.once.support=required` would be
    # pair-scoped and reach the checkpoint and heartbeat connectors, which declare no exactly-once support and
    # would then not start: it is set on Strimzi's source connector only.
    Setting("exactly.once.source.support", "enabled", EXACTLY_ONCE_WHY,
            InProperties(Section.EXACTLY_ONCE, Scope.TARGET), (WORKER,),
            Admission(DELIVERY_RULE, (Held(WORKER),), off="disabled"), exactly_once=True),
    Setting("consumer.isolation.level", "read_committed", READ_COMMITTED_WHY,
            InProperties(Section.EXACTLY_ONCE, Scope.SOURCE), exactly_once=True),
    Setting("exactly.once.support", "required", "Connect starts the source connector only if it runs it "
            "exactly once (MirrorSourceConnector does when it reads committed records)", strimzi=(SOURCE,),
            exactly_once=True),
    Setting("source.consumer.isolation.level", "read_committed", READ_COMMITTED_WHY, strimzi=(SOURCE,),
            admission=Admission(DELIVERY_RULE, (Held(SOURCE),)), exactly_once=True),
    Setting("transaction.boundary", "poll", "records are visible when their transaction commits: one per poll "
            "commits what a paced feed brings as it comes, where `interval` would hold every record up to the "
            "interval (KIP-618)", InProperties(Section.EXACTLY_ONCE, Scope.PAIR), (SOURCE,), exactly_once=True),
    Setting("producer.batch.size", 262_144, "a transaction's records are all sent before it commits, by Connect's "
            "producer, one request at a time with one batch per partition in it: 256 KiB batches (Kafka's 16 KiB) "
            "send a poll in a few requests instead of dozens", InProperties(Section.EXACTLY_ONCE, Scope.TARGET),
            (WORKER,), exactly_once=True),
    Setting("consumer.max.poll.records", capacity.DEFAULT_TRANSACTION_RECORDS, TRANSACTION_RECORDS_WHY,
            InProperties(Section.EXACTLY_ONCE, Scope.SOURCE), exactly_once=True, per_flow=transaction_records),
    Setting("source.consumer.max.poll.records", capacity.DEFAULT_TRANSACTION_RECORDS, TRANSACTION_RECORDS_WHY,
            strimzi=(SOURCE,), exactly_once=True, per_flow=transaction_records),
    # KIP-710: the leader's internal REST server, for flows run by several nodes or exactly once
    Setting("dedicated.mode.enable.internal.rest", "true", "followers forward task configs and fencing to the "
            "leader over MM2's internal REST server (KIP-710)", InProperties(Section.INTERNAL_REST, comment=(
                "The leader's internal REST server, for followers' task configs and fencing: loopback only; an MM2",
                "on several hosts sets listeners and rest.advertised.host.name to an address its peers reach.")),
            internal_rest=True),
    Setting("listeners", "http://127.0.0.1:0", "the internal REST server listens on loopback, on any free port: "
            "nothing outside the host reaches it", InProperties(Section.INTERNAL_REST), internal_rest=True),
    # Connect's default (5 minutes) holds a vanished node's tasks for it, unassigned, in case it returns: for a
    # flow run by several nodes that is 5 minutes without copying that node's partitions. Connect notices a
    # SIGKILLed node after its session timeout (10 s), then waits this long (tests/integration/test_mm2_nodes.py).
    Setting("scheduled.rebalance.max.delay.ms", REBALANCE_DELAY_MS, "a node that dies hands its tasks to the "
            "flow's other nodes after 10 s instead of Connect's 5 minutes, during which its partitions are not "
            "copied; a node back within the delay takes its own tasks again", InProperties(
                Section.INTERNAL_REST, Scope.TARGET, comment=(
                    "A node that dies hands its tasks to the others after this delay (Connect's default: 5 "
                    "minutes).",)), internal_rest=True),
)


def flow_settings(flow: Flow) -> tuple[Setting, ...]:
    """The entries whose value is the flow's own: its replication policy class (names.REPLICATION_POLICY_CLASSES),
    and the `mm2gov.flow.*` keys through which that policy names the flow's own offset-syncs, checkpoints and
    heartbeats topics (pair-scoped in the file: MirrorMakerConfig drops unknown top-level keys)."""
    policy = Setting("replication.policy.class", names.REPLICATION_POLICY_CLASSES[flow.replication_policy],
                     "the flow's remote names, and its own MM2 topics instead of Kafka's per-alias ones",
                     InProperties(Section.POLICY), (SOURCE, CHECKPOINT))
    topics = tuple(Setting(key, value, "names the flow's own MM2 topics for its replication policy",
                           InProperties(Section.OFFSETS, Scope.PAIR), (SOURCE, CHECKPOINT))
                   for key, value in names.mm2_flow_policy_config(flow.id).items())
    return (policy, *topics)


def for_flow(flow: Flow) -> tuple[Setting, ...]:
    """Every entry of the flow, its own first (the writers' order): exactly-once ones only on such a flow,
    internal REST ones only on a flow that runs the server (several nodes, or exactly once)."""
    return (*flow_settings(flow), *(s.for_flow(flow) for s in SETTINGS if (flow.exactly_once or not s.exactly_once)
                                    and (flow.internal_rest or not s.internal_rest)))


def admission_input() -> list[dict[str, object]]:
    """The entries a KafkaMirrorMaker2 carries or admission holds, as the repo document hands them to OPA."""
    return [s.to_input() for s in SETTINGS if s.strimzi or s.admission]
