"""The governance repo's schema (CONTRACT.md) as pydantic models.

Models are strict (no type coercion) and forbid unknown keys; `mm2gov schema`
prints `repo_json_schema()`. Policy questions (separators, overlaps, grants,
classification) are not here: they are Rego rules.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic.json_schema import models_json_schema

from governance.model.names import K8S_NAME, K8S_NAME_MAX
from governance.model.tenancy import PrincipalQuota, RecordMarker, Slo

_DNS_LABEL = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
DnsLabel = Annotated[str, StringConstraints(pattern=_DNS_LABEL)]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
# The start of a Kafka topic name: only the characters and at most the length Kafka's Topic.validate accepts,
# so a prefix that no topic can start with (a blank, `$`, `#`, a non-ASCII letter) is refused where it is written
_TOPIC_PREFIX = r"^[A-Za-z0-9._-]{1,249}$"
TopicPrefix = Annotated[str, StringConstraints(pattern=_TOPIC_PREFIX)]
# A grant's topic: a topic prefix, or one of the wildcards the grant_wildcard rule reports by name
_GRANT_TOPIC = r"^(\*|\.\*|[A-Za-z0-9._-]{0,249})$"
GrantTopic = Annotated[str, StringConstraints(pattern=_GRANT_TOPIC)]
# The name of a Secret (Kubernetes) or of a folder of the secret store: a Kubernetes name (names.py K8S_NAME),
# so it is also one path part, never `..` or `a/b`, wherever mm2gov writes it (MM2 truststore paths, Strimzi
# secretName).
SecretName = Annotated[str, StringConstraints(pattern=K8S_NAME.pattern, max_length=K8S_NAME_MAX)]
_PRINCIPAL = r"^User:\S+$"
PrincipalName = Annotated[str, StringConstraints(pattern=_PRINCIPAL)]
_HOST_PORT = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):[0-9]{1,5}"
# host:port[,host:port...] and nothing else: the value reaches MM2 properties, Strimzi
# objects and admission checks, where anything more (spaces, other keys) would be read
# differently or compared wrongly.
_BOOTSTRAP = rf"^{_HOST_PORT}(,{_HOST_PORT})*$"
BootstrapServers = Annotated[str, StringConstraints(pattern=_BOOTSTRAP)]
# Kubernetes quantities and a JVM heap size, as the Strimzi CR and the dedicated-mode command take them
_CPU = r"^([1-9][0-9]{0,5}m|[0-9]{1,3}(\.[0-9]{1,3})?)$"
_MEMORY = r"^[1-9][0-9]{0,6}(Mi|Gi)$"
_HEAP = r"^[1-9][0-9]{0,6}[mg]$"
# What each pattern means, in the words the loader's message uses instead of the regex
PATTERN_MEANINGS = {
    _DNS_LABEL: "a DNS label: lowercase letters, digits and '-', at most 63, starting and ending with a letter "
                "or digit",
    _TOPIC_PREFIX: "the start of a Kafka topic name: letters, digits, '.', '_' and '-' only, at most 249",
    _GRANT_TOPIC: "a topic prefix (letters, digits, '.', '_' and '-' only, at most 249)",
    K8S_NAME.pattern: "a Kubernetes name: lowercase letters, digits, '-' and '.', starting and ending with a "
                      f"letter or digit, at most {K8S_NAME_MAX}",
    _PRINCIPAL: "'User:' followed by a name without blanks",
    _BOOTSTRAP: "host:port[,host:port...] and nothing else",
    _CPU: "a Kubernetes CPU quantity: cores ('2', '0.5') or millicores ('500m')",
    _MEMORY: "a Kubernetes memory quantity in Mi or Gi ('2Gi', '1536Mi')",
    _HEAP: "a JVM heap size in m or g ('1g', '1536m')",
}

SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
# A first topic prefix the probe topic (prefix + "mm2gov-probe") can follow: Kafka's legal topic characters,
# 249 characters at most with the 12-character suffix.
PROBE_PREFIX = re.compile(r"^[A-Za-z0-9._-]{1,237}$")
EXACTLY_ONCE = "exactly_once"  # a flow's `delivery` that makes its MM2 transactional (KIP-618)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Security(Strict):
    protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = None
    tls_min_version: Literal["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"] = "TLSv1.2"
    ca_secret: SecretName | None = Field(None, description="Name of the Secret or file holding the CA, never the CA")
    admin_credentials_secret: SecretName | None = Field(
        None, description="Name of the Secret with admin credentials for apply/audit, never the credentials"
    )
    client_ca_secret: SecretName | None = Field(
        None, description="Secret of the CA the brokers trust for client certificates (mTLS); when set, "
                          "`mm2gov secrets issue` gives every principal on the cluster a certificate signed by it "
                          "(its key is kept in `<client_ca_secret>-key`)")

    @model_validator(mode="after")
    def _mechanism_matches_protocol(self) -> Security:
        if self.protocol in SASL_PROTOCOLS and self.sasl_mechanism is None:
            raise ValueError(f"sasl_mechanism is required with protocol {self.protocol}")
        if self.protocol not in SASL_PROTOCOLS and self.sasl_mechanism is not None:
            raise ValueError(f"sasl_mechanism is only valid with SASL protocols, not {self.protocol}")
        if self.client_ca_secret and not self.protocol.endswith("SSL"):
            raise ValueError(f"client_ca_secret needs a TLS protocol (SSL or SASL_SSL), not {self.protocol}")
        return self


class StrimziTarget(Strict):
    namespace: DnsLabel
    cluster: DnsLabel


class Cluster(Strict):
    bootstrap_servers: BootstrapServers
    zone: NonEmpty = Field(description="Free label used by policies, e.g. onprem | cloud")
    security: Security
    strimzi: StrimziTarget | None = None


class ClustersFile(Strict):
    clusters: dict[DnsLabel, Cluster] = Field(min_length=1)


class Principal(Strict):
    name: PrincipalName
    access: list[Literal["read", "write"]] = Field(min_length=1)
    quota: PrincipalQuota | None = Field(
        None, description="Opt-in client quota, set on each cluster where the principal has ACLs (per broker)")


Rate = Annotated[int, Field(gt=0, le=2**63 - 1)]  # bytes per second: Kafka's quota values are longs


class FlowCapacity(Strict):
    """What a flow must carry (docs/capacity.md): mm2gov sizes its MM2 and sets its quotas from this and the
    platform's calibration (capacity.yaml)."""

    bytes_per_second: Rate = Field(description="The source topics' steady write rate the flow replicates")
    catch_up_bytes_per_second: Rate | None = Field(
        None, description="The most the flow may copy while it catches up on a backlog (default bytes_per_second): "
                          "its MM2's tasks are sized for it and its principal's quotas hold it there, so its "
                          "catch-up cannot take its neighbours' share")
    source_partitions: Rate | None = Field(
        None, description="How many partitions the flow's source topics have together; needed when the flow "
                          "gets more than one task (a task copies whole partitions)")

    @property
    def catch_up(self) -> int:
        return self.catch_up_bytes_per_second or self.bytes_per_second

    @model_validator(mode="after")
    def _catch_up_not_below_steady(self) -> FlowCapacity:
        if self.catch_up < self.bytes_per_second:
            raise ValueError(f"catch_up_bytes_per_second ({self.catch_up}) is below bytes_per_second "
                             f"({self.bytes_per_second}): a flow that copies slower than its topics grow never "
                             "catches up")
        return self


class Flow(Strict):
    source: DnsLabel
    target: DnsLabel
    topics: list[NonEmpty] = Field(min_length=1, description="Java regexes, inside the tenant's topic_prefixes")
    groups: list[NonEmpty] = Field(default_factory=list, description="Java regexes, inside group_prefixes")
    exclude_topics: list[NonEmpty] = Field(
        default_factory=list,
        description="Java regexes (same grammar as topics) of topics the flow does not replicate even when topics "
                    "matches them; they only narrow the flow: its MM2's topics.exclude is always mm2gov's own "
                    "exclusions (internal topics, mm2gov.*) followed by these. `mm2gov import` carries a legacy "
                    "topics.exclude / topics.blacklist here")
    exclude_groups: list[NonEmpty] = Field(
        default_factory=list,
        description="Java regexes (same grammar as groups) of consumer groups whose offsets the flow does not "
                    "sync even when groups matches them; MM2's default groups.exclude always stays in front")
    replication_policy: Literal["default", "identity"] = "default"
    delivery: Literal["at_least_once", "exactly_once"] = Field(
        "at_least_once",
        description="exactly_once: the flow's MirrorMaker 2 writes each source batch and its offsets in one "
                    "transaction on the target (KIP-618), so no record is copied twice after a crash. Opt-in: "
                    "records become visible to read_committed consumers only when that transaction commits "
                    "(added latency), every downstream consumer must read with "
                    "isolation.level=read_committed (read_uncommitted ones still see aborted copies), and the "
                    "target's transaction coordinator carries the load. at_least_once (default): records are "
                    "visible at once and a crash may copy some twice")
    slo: Slo | None = Field(
        None, description="Opt-in replication SLO: the flow also replicates its tenant's probe topic "
                          "(<first topic prefix>mm2gov-probe) and `mm2gov probe` measures it against these numbers")
    capacity: FlowCapacity | None = Field(
        None, description="Opt-in: what the flow must carry. Sizes its MirrorMaker 2 (tasks, nodes, CPU, memory) "
                          "and sets its principal's client quotas from capacity.yaml's calibration; without it the "
                          "flow runs one task on one node, unthrottled")


class NodeSize(Strict):
    """One MirrorMaker 2 node (a JVM, a Strimzi pod) as the platform runs it."""

    tasks: Rate = Field(description="Tasks one node runs at task_bytes_per_second each (about one per core)")
    cpu: Annotated[str, StringConstraints(pattern=_CPU)] = Field(description="CPU request per node")
    memory: Annotated[str, StringConstraints(pattern=_MEMORY)] = Field(
        description="Memory request and limit per node")
    heap: Annotated[str, StringConstraints(pattern=_HEAP)] = Field(description="JVM heap (-Xms and -Xmx) per node")


class Calibration(Strict):
    """What one MM2 task carried on the platform's hardware, measured (`bench/capacity.py --calibrate`)."""

    measured_at: AwareDatetime = Field(strict=False, description="When, with its time zone (2026-11-26T10:00:00Z)")
    measured_by: NonEmpty = Field(description="The command and machine that measured it")
    kafka_version: NonEmpty = Field(description="The MirrorMaker 2 version measured")
    task_bytes_per_second: Rate = Field(description="What one MM2 source task copied, sustained")
    node: NodeSize


class CapacityLimits(Strict):
    flow_bytes_per_second: Rate = Field(description="The most one flow may ask (its catch-up rate)")
    flow_nodes: Rate = Field(description="The most MM2 nodes one flow may get")


class ClusterCapacity(Strict):
    brokers: Rate = Field(description="Brokers of the cluster: Kafka enforces a quota on each broker, so a "
                                      "flow's rate is spread over them")
    replication_bytes_per_second: Rate = Field(
        description="The cluster's replication budget: the catch-up rates of the flows into it together, and "
                    "of the flows out of it together, stay within it")


class CapacityFile(Strict):
    """capacity.yaml: the platform's calibration and limits, read by validate, generate, plan and size."""

    calibration: Calibration
    limits: CapacityLimits
    clusters: dict[DnsLabel, ClusterCapacity] = Field(default_factory=dict)


class Grant(Strict):
    to: NonEmpty
    topics: list[GrantTopic] = Field(min_length=1, description="Topic prefixes of the granting tenant")
    access: list[NonEmpty] = Field(min_length=1, description="Only read is allowed by the built-in policy")


class Tenant(Strict):
    name: DnsLabel
    owners: list[NonEmpty] = Field(min_length=1)
    classification: Literal["public", "internal", "confidential", "restricted"]
    clusters: list[DnsLabel] = Field(
        default_factory=list,
        description="Clusters where the tenant's own topics live; default: its flows' sources, else every cluster",
    )
    topic_prefixes: list[TopicPrefix] = Field(
        min_length=1, description="The starts of the tenant's topic names: letters, digits, '.', '_', '-' (the "
                                  "characters of a Kafka topic name), ending with a separator")
    group_prefixes: list[NonEmpty] = Field(default_factory=list)
    principals: list[Principal] = Field(default_factory=list)
    namespace: DnsLabel | None = Field(
        None, description="Kubernetes namespace of the tenant's workloads and Secrets (default: the tenant name)")
    record_marker: RecordMarker | None = None
    flows: list[Flow] = Field(default_factory=list)
    grants: list[Grant] = Field(default_factory=list)

    @model_validator(mode="after")
    def _probe_topic_is_a_topic(self) -> Tenant:
        # The probe topic is named inside the first prefix (names.probe_topic): it must be a Kafka topic name.
        if any(flow.slo for flow in self.flows) and not PROBE_PREFIX.match(self.topic_prefixes[0]):
            raise ValueError(f"a flow has an slo, so the first topic prefix {self.topic_prefixes[0]!r} names the "
                             "probe topic and must be a Kafka topic name: letters, digits, '.', '_', '-', at most "
                             "237 characters")
        return self


def repo_json_schema() -> dict[str, Any]:
    """JSON Schema of a governance repo file: clusters.yaml is a ClustersFile, tenants/*.yaml a Tenant."""
    _, top = models_json_schema([(ClustersFile, "validation"), (Tenant, "validation"),
                                 (CapacityFile, "validation")], ref_template="#/$defs/{model}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "mm2gov governance repository file",
        "description": "clusters.yaml validates against ClustersFile; each tenants/*.yaml against Tenant; the "
                       "optional capacity.yaml against CapacityFile.",
        "oneOf": [{"$ref": "#/$defs/ClustersFile"}, {"$ref": "#/$defs/Tenant"}, {"$ref": "#/$defs/CapacityFile"}],
        "$defs": top["$defs"],
    }
