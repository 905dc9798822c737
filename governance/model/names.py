"""Every name mm2gov derives, computed here and only here.

Flow ids, MirrorMaker 2 principals, Connect groups and topics, remote-topic
prefixes, secret names and namespaces are consumed by compile, apply, secrets,
admission (through the OPA input) and the audit; none of them re-derives a
name. Two different inputs must never give one name (a shared name hands one
tenant's password, certificate or MM2 to another), so names are built from
parts with an injective encoding:

- parts are DNS labels (tenant names, cluster aliases: `[a-z0-9-]`, never
  starting or ending with `-`); a `-` inside every part but the last is
  doubled, so the first single `-` always ends a part: `pay` + `eu-onprem`
  gives `pay-eu--onprem-to-x`, `pay-eu` + `onprem` gives `pay--eu-onprem-to-x`
  (names without a `-`, like acme's, read as before);
- a user name that is a plain lowercase DNS label is used as it is; any other
  (case, `.`, `@`, length) becomes its sanitised form, a `.` and a hash of the
  exact name: a plain label never contains a `.`, so `User:Payments-App` and
  `User:payments-app` differ, and no one can declare a plain user whose name
  equals another's hashed form.

The reserved names below (mm2gov's, Kafka's and MM2's own) are what no tenant
may claim; the Rego rules read them from the OPA input.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

SEPARATOR = "-"
DNS_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
PLAIN_USER = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
MAX_PLAIN_USER = 100  # longer user names are hashed so secret names stay under Kubernetes' 253
REMOTE_SEPARATOR = "."  # DefaultReplicationPolicy's `replication.policy.separator`, which mm2gov sets

MM2_USER_PREFIX = "mm2-"
INTERNAL_TOPIC_PREFIX = "mm2gov."
OWNERSHIP_TOPIC = "mm2gov.ownership"
SYSTEM_NAMESPACE = "mm2gov-system"
# keys inside the secrets named below (Kubernetes Secret keys, or files `<root>/<name>/<key>`)
PASSWORD_KEY = "password"
USERNAME_KEY = "username"
CA_CERT_KEY = "ca.crt"


def canonical(name: str) -> str:
    """The one form of every name an authority may take for the same one. Compatibility forms folded (NFKC:
    fullwidth letters, ligatures), invisible format characters (zero-width spaces and joiners, Unicode
    category Cf) and blanks removed, case folded: a cluster whose `ssl.principal.mapping.rules` end in /L or
    /U, a SCRAM user typed with a stray blank, or a reviewer reading `User:Admin` all take these as one.
    Every comparison of a declared name with a reserved or another owner's name compares these forms."""
    folded = unicodedata.normalize("NFKC", name)
    kept = "".join(c for c in folded if unicodedata.category(c) != "Cf" and not c.isspace())
    return unicodedata.normalize("NFKC", kept.casefold())


def escape(part: str) -> str:
    """A part of a derived name that another part follows: its own `-` doubled."""
    return part.replace("-", "--")


def flow_id(tenant: str, source: str, target: str) -> str:
    """The id of a tenant's flow: names its MM2, principal, files, Connect group and topics."""
    return SEPARATOR.join((escape(tenant), escape(source), "to", target))


def mm2_user(flow: str) -> str:
    """The user a flow's MirrorMaker 2 logs in as, on both clusters (reserved: no tenant may declare it)."""
    return f"{MM2_USER_PREFIX}{flow}"


def mm2_principal(flow: str) -> str:
    return f"User:{mm2_user(flow)}"


def mm2_internal_prefix(flow: str) -> str:
    """Prefix of the flow's own Connect group and topics on the target (ends with the separator)."""
    return f"{INTERNAL_TOPIC_PREFIX}{flow}."


@dataclass(frozen=True)
class ConnectNames:
    group: str
    configs: str
    offsets: str
    status: str


def connect_names(flow: str) -> ConnectNames:
    internal = mm2_internal_prefix(flow)
    return ConnectNames(f"{internal}connect", f"{internal}configs", f"{internal}offsets", f"{internal}status")


@dataclass(frozen=True)
class Mm2FlowTopics:
    """The flow's own MM2 topics on the target, which MM2 would otherwise name per cluster alias and
    share between every flow of the same clusters. The flow's ReplicationPolicy
    (replication-policy/, `mm2gov.flow.*.topic`) reads these names; it never derives them."""

    offset_syncs: str
    checkpoints: str
    heartbeats: str


def mm2_flow_topics(flow: str) -> Mm2FlowTopics:
    internal = mm2_internal_prefix(flow)
    return Mm2FlowTopics(f"{internal}offset-syncs", f"{internal}checkpoints", f"{internal}heartbeats")


# Kafka Connect's transactional ids, which only an exactly-once flow's MM2 uses (KIP-618): each source
# task's producer is `<group.id>-<connector>-<task>` (Worker.taskTransactionalId) and the leader's
# config-topic producer `connect-cluster-<group.id>` (DistributedConfig.transactionalProducerId).
CONNECT_LEADER_TRANSACTIONAL_PREFIX = "connect-cluster-"


@dataclass(frozen=True)
class Mm2TransactionalIds:
    """The transactional ids of a flow's exactly-once MM2 on the target. `tasks` is a prefix that ends with
    a separator (the flow's Connect group and `-`): flow ids hold no `.`, so no other flow's group starts
    with it. `leader` is one exact name, never the `connect-cluster-` prefix, which would reach every
    Connect cluster's leader, other flows' included."""

    tasks: str
    leader: str


def mm2_transactional_ids(flow: str) -> Mm2TransactionalIds:
    group = connect_names(flow).group
    return Mm2TransactionalIds(f"{group}-", f"{CONNECT_LEADER_TRANSACTIONAL_PREFIX}{group}")


# The flow's ReplicationPolicy class per `replication_policy` (replication-policy/, io.mm2gov.replication):
# Kafka's Default/IdentityReplicationPolicy for remote names, the flow's own names for its MM2 topics.
REPLICATION_POLICY_CLASSES = {
    "default": "io.mm2gov.replication.FlowReplicationPolicy",
    "identity": "io.mm2gov.replication.FlowIdentityReplicationPolicy",
}
# The connector config keys the policy reads (FlowTopics.java); all four are required.
FLOW_ID_KEY = "mm2gov.flow.id"
FLOW_TOPIC_KEYS = {
    "offset_syncs": "mm2gov.flow.offset-syncs.topic",
    "checkpoints": "mm2gov.flow.checkpoints.topic",
    "heartbeats": "mm2gov.flow.heartbeats.topic",
}


def mm2_flow_policy_config(flow: str) -> dict[str, str]:
    """The `mm2gov.flow.*` keys and values of a flow's connector configs (unscoped, as a connector reads them)."""
    topics = mm2_flow_topics(flow)
    return {FLOW_ID_KEY: flow, **{key: getattr(topics, field) for field, key in FLOW_TOPIC_KEYS.items()}}


def remote_prefix(replication_policy: str, source_alias: str) -> str:
    """What MM2 puts before a source topic's name on the target: '<source>.' (default) or '' (identity)."""
    return "" if replication_policy == "identity" else f"{source_alias}{REMOTE_SEPARATOR}"


def remote_name(replication_policy: str, source_alias: str, name: str) -> str:
    """`DefaultReplicationPolicy`: '<source>.<name>'; `IdentityReplicationPolicy`: the name itself."""
    return remote_prefix(replication_policy, source_alias) + name


# ---- the replication probe (`mm2gov probe`, governance/probe) ----------------------------------

PROBE_TOPIC_NAME = "mm2gov-probe"
PROBE_USER_PREFIX = "mm2gov-probe-"  # inside the reserved `mm2gov` user prefix: no tenant may declare it
PROBE_PARTITIONS = 3  # the probe topic's partitions when the probe creates it


def probe_topic(topic_prefixes: list[str]) -> str:
    """The tenant's probe topic on a flow's source: inside its first topic prefix, so the tenant's flows
    replicate it like any other of its topics and no other tenant's name can be reached through it."""
    return f"{topic_prefixes[0]}{PROBE_TOPIC_NAME}"


def literal_regex(name: str) -> str:
    """A Java regex (config/regex.py grammar) matching exactly `name`: every punctuation mark escaped."""
    return "".join(c if (c.isascii() and c.isalnum()) or c == "_" else f"\\{c}" for c in name)


def probe_user(tenant: str) -> str:
    """The user a tenant's probe logs in as on its flows' clusters (one per tenant; tenant names are unique)."""
    return f"{PROBE_USER_PREFIX}{tenant}"


def probe_principal(tenant: str) -> str:
    return f"User:{probe_user(tenant)}"


def user_name(principal: str) -> str:
    """The user name of a `User:<name>` principal."""
    return principal.split(":", 1)[1]


def user_part(user: str) -> str:
    """A user name as the last part of a Kubernetes name: itself when a plain label, else sanitised.hash."""
    if PLAIN_USER.match(user) and len(user) <= MAX_PLAIN_USER:
        return user
    safe = re.sub(r"[^a-z0-9]+", "-", user.lower()).strip("-")[:80].strip("-") or "user"
    digest = hashlib.sha256(user.encode("utf-8")).hexdigest()[:20]
    return f"{safe}.h{digest}"


def scram_secret(cluster: str, principal: str) -> str:
    """The secret holding `principal`'s SCRAM password on `cluster` (one per cluster: never shared)."""
    return f"scram{SEPARATOR}{escape(cluster)}{SEPARATOR}{user_part(user_name(principal))}"


def tls_secret(cluster: str, principal: str) -> str:
    """The secret holding `principal`'s client certificate for `cluster`."""
    return f"tls{SEPARATOR}{escape(cluster)}{SEPARATOR}{user_part(user_name(principal))}"


def ca_key_secret(ca_secret: str) -> str:
    """Where a CA's private key is kept: apart from its certificate, which many namespaces get."""
    return f"{ca_secret}-key"


def tenant_namespace(tenant: str, declared: str | None) -> str:
    """The Kubernetes namespace of a tenant's workloads and Secrets: its `namespace:`, else its name."""
    return declared or tenant


# ---- alert routing (compile/monitoring.py: the generated Alertmanager configuration) ------------

# Alerts of no tenant go here: a `.` no tenant name (a DNS label) holds, so no tenant named `platform`
# can take the platform's receiver, nor make the configuration invalid with a second receiver of its name.
PLATFORM_ALERT_RECEIVER = "mm2gov.platform"


def alert_receiver(tenant: str) -> str:
    """The Alertmanager receiver a tenant's alerts are routed to."""
    return f"mm2gov-{tenant}"


def alert_webhook_secret(tenant: str) -> str:
    """The Secret holding the tenant's Slack webhook URL, mounted into Alertmanager."""
    return f"mm2gov-alerts-{tenant}"



# ---- dashboards (compile/monitoring.py: one Grafana dashboard per tenant) ----------------------------

GRAFANA_UID_MAX = 40  # Grafana refuses a longer dashboard uid (its Dashboard API documentation)


def dashboard_uid(tenant: str) -> str:
    """The tenant's Grafana dashboard uid: `mm2gov-<tenant>` when it fits, else its start, `_` and a hash of
    the name (a `_` no tenant name holds, so no tenant's plain uid equals another's hashed one)."""
    uid = f"mm2gov-{tenant}"
    if len(uid) <= GRAFANA_UID_MAX:
        return uid
    digest = hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:20]
    return f"{uid[:GRAFANA_UID_MAX - len(digest) - 1]}_{digest}"

# ---- Kubernetes object names (compile/strimzi.py, compile/write.py, secrets/rotate.py) ---------------
#
# Every object name is injective in what it names, and within Kubernetes' limits: a name that already is
# a Kubernetes name is used as it is, any other becomes its sanitised start, `.h` and a hash of the exact
# text. A used-as-is name never ends like a hashed one (such a name is hashed too), so no one can declare
# a name that equals another's hashed form; two texts that differ only in what sanitising folds (case,
# `_` against `-`) keep different hashes. Collisions that remain possible (two owners of one exact name)
# are the policy's `derived_name_collision`, which reads these names from the OPA input.

K8S_NAME_MAX = 253  # a DNS subdomain: KafkaTopic, KafkaUser, Secret, ConfigMap names
K8S_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
HASH_LENGTH = 20  # hex digits of sha256: 80 bits, beyond any search for a second text with one hash
HASHED_END = re.compile(rf"\.h[0-9a-f]{{{HASH_LENGTH}}}$")
# Strimzi names a KafkaMirrorMaker2's API Service `<name>-mirrormaker2-api`, a DNS label (63 at most), and
# the flow label carries the name (a label value: 63 at most).
MIRROR_MAKER_NAME_MAX = 63 - len("-mirrormaker2-api")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def is_k8s_name(name: str) -> bool:
    """A DNS subdomain as Kubernetes validates object names (IsDNS1123Subdomain)."""
    return len(name) <= K8S_NAME_MAX and K8S_NAME.match(name) is not None


def k8s_name(text: str) -> str:
    """`text` as a Kubernetes object name, injectively (see above)."""
    if is_k8s_name(text) and not HASHED_END.search(text):
        return text
    safe = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:200].strip("-") or "x"
    return f"{safe}.h{_digest(text)}"


def kafka_topic_object(topic: str) -> str:
    """The name of the KafkaTopic of `topic` (its spec.topicName is the exact topic name)."""
    return k8s_name(topic)


def mirror_maker_object(flow: str) -> str:
    """The name of a flow's KafkaMirrorMaker2, also its `mm2gov.io/flow` label: the flow id when it is at
    most one shorter than Strimzi allows, else its start, `-` and a hash, exactly that long (so a plain id
    never equals a hashed one)."""
    if len(flow) < MIRROR_MAKER_NAME_MAX:
        return flow
    return f"{flow[:MIRROR_MAKER_NAME_MAX - HASH_LENGTH - 1]}-{_digest(flow)}"


def strimzi_file(kind: str, namespace: str, name: str) -> str:
    """The file under OUT/strimzi of one object. `_` is in no Kubernetes name: one file per object."""
    return f"{kind.lower()}_{namespace}_{name}.yaml"


# ---- reserved names ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Reserved:
    """A name or prefix no tenant may claim. `prefix`: every name starting with `text` is reserved."""

    text: str
    prefix: bool
    why: str

    def to_input(self) -> dict[str, object]:
        return {"text": self.text, "canonical": canonical(self.text), "prefix": self.prefix, "why": self.why}


def reserved_topics(cluster_aliases: list[str]) -> list[Reserved]:
    items = [
        Reserved(INTERNAL_TOPIC_PREFIX, True, "mm2gov's own topics: every flow's Connect topics and "
                                              f"{OWNERSHIP_TOPIC}, which decides what apply deletes"),
        Reserved("_", True, "Kafka's internal topics (__consumer_offsets, __transaction_state, ...)"),
        Reserved("mm2-", True, "MirrorMaker 2's default internal topics (mm2-offset-syncs.*, mm2-configs.* ...)"),
        Reserved("connect-", True, "Kafka Connect's default internal topics"),
        Reserved("heartbeats", False, "MirrorMaker 2's heartbeats topic"),
    ]
    items += [Reserved(f"{alias}{REMOTE_SEPARATOR}", True,
                       f"remote topics replicated from cluster {alias} (DefaultReplicationPolicy)")
              for alias in sorted(cluster_aliases)]
    return items


def reserved_groups(cluster_aliases: list[str]) -> list[Reserved]:
    items = [
        Reserved(INTERNAL_TOPIC_PREFIX, True, "every mm2gov flow's own Connect group"),
        Reserved("connect-", True, "Kafka Connect's default groups"),
        Reserved("mm2-", True, "MirrorMaker 2's default groups"),
    ]
    items += [Reserved(f"{alias}-mm2", False, f"MirrorMaker 2's default Connect group for source {alias}")
              for alias in sorted(cluster_aliases)]
    return items


def alias_conflicts(alias: str) -> list[Reserved]:
    """The reserved topic names and prefixes that cluster `alias`'s remote prefix would cover: an alias
    `mm2gov` makes every flow's own topics (`mm2gov.*`) look like remote topics of that cluster."""
    remote = f"{alias}{REMOTE_SEPARATOR}"
    return [r for r in reserved_topics([]) if (r.prefix and remote.startswith(r.text)) or r.text.startswith(remote)]


RESERVED_USERS = (
    Reserved("ANONYMOUS", False, "every unauthenticated client is User:ANONYMOUS"),
    Reserved("admin", False, "the clusters' super user"),
    Reserved(MM2_USER_PREFIX, True, "each flow's MirrorMaker 2 principal (User:mm2-<flow>)"),
    Reserved("mm2gov", True, "mm2gov's own principals"),
)

RESERVED_NAMESPACES = (
    Reserved(SYSTEM_NAMESPACE, False, "mm2gov's system namespace (CA keys, admin credentials)"),
    Reserved("kube-", True, "Kubernetes' own namespaces"),
    Reserved("default", False, "Kubernetes' default namespace"),
)
