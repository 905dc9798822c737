"""The resolved tenancy: what the policy decided each tenant may own and do, typed, built once.

OPA's decision (`data.mm2gov.decision.scopes`, docs/policies.md "Decision") is the only source: it holds
what the rules kept (valid grants only, the home clusters, each principal's operations, the flows with
their remote prefixes and probe facts). `parse_tenancy` reads it with one strict parser: a missing key, an
unknown key or a value of the wrong type is a `MalformedDecision`, never a default, so a policy that
returns something unexpected denies instead of compiling into an allow. Every name the model offers
beyond the decision (a flow's MM2 principal, Connect names, internal topics, transactional ids; a
tenant's probe principal) comes from `governance.model.names`, as everywhere else.

The models are frozen pydantic models: the decision is JSON, and pydantic checks its shape in compiled
code (a thousand tenants in milliseconds), where a hand-written walk would be slower and easier to get
wrong. Consumers read attributes, never string keys.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, model_validator

from governance.model import names
from governance.model.acl import Operation
from governance.model.capacity import Capacity

EXACTLY_ONCE = "exactly_once"


class _Model(BaseModel):
    """Frozen, no unknown key, no coercion but JSON's arrays to tuples."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=False, ignored_types=(cached_property,))


Names = tuple[StrictStr, ...]


class PrincipalQuota(BaseModel):
    """A tenant principal's client quota on each cluster it has ACLs on (docs/capacity.md): declared here, once,
    for the tenant files' schema (config.schema) and the decision. Kafka enforces each rate on every broker."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    producer_byte_rate: int | None = Field(None, gt=0, le=2**63 - 1,
                                           description="Bytes per second it may produce on each broker")
    consumer_byte_rate: int | None = Field(None, gt=0, le=2**63 - 1,
                                           description="Bytes per second it may fetch on each broker")
    request_percentage: int | None = Field(None, gt=0, le=100 * 1000, description=(
        "Share of a broker's request handler and network threads' time it may use, in percent of one thread"))

    @model_validator(mode="after")
    def _one_limit_at_least(self) -> PrincipalQuota:
        if self.producer_byte_rate is None and self.consumer_byte_rate is None and self.request_percentage is None:
            raise ValueError("a quota sets producer_byte_rate, consumer_byte_rate or request_percentage")
        return self


class Principal(_Model):
    name: StrictStr
    access: tuple[Literal["read", "write"], ...]
    topic_operations: tuple[Operation, ...]  # Kafka's names, as the policy decided them
    group_operations: tuple[Operation, ...]
    quota: PrincipalQuota | None

    @property
    def reads(self) -> bool:
        return "read" in self.access


class GrantGiven(_Model):
    """A grant the policy kept (grant_valid): `to` may read the granting tenant's names under `topics`."""

    to: StrictStr
    topics: Names
    access: Names


class GrantReceived(_Model):
    from_: StrictStr
    topics: Names
    access: Names

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True,
                              alias_generator=lambda field: "from" if field == "from_" else field)


class Probe(_Model):
    """The tenant's probe topic this `slo` flow also replicates (names.probe_topic), as input.py derived it."""

    topic: StrictStr
    topic_item: StrictStr  # the exact topics item MM2 gets (names.literal_regex)
    remote_topic: StrictStr


class RecordMarker(BaseModel):
    """The header (and its value) every record of the tenant carries: what the audit tells its data by."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    header: str = Field(min_length=1)
    value: str = Field(min_length=1)


# Slo and RecordMarker are declared here, once: the tenant files' schema (config.schema) and the decision read them.
class Slo(BaseModel):
    """A flow's replication SLO, measured end to end by `mm2gov probe` (docs/probe.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    latency_p99_ms: int = Field(gt=0, description="Highest allowed p99 end-to-end latency of the probe's canaries, "
                                                  "from the probe's send on the source to its read on the target (ms)")
    max_lost: int = Field(0, ge=0, description="Canaries a run may miss on the target after its wait (default 0)")
    max_duplicated: int = Field(0, ge=0, description="Duplicate canary copies a run may see on the target "
                                                     "(default 0; an at_least_once MM2 may copy some twice "
                                                     "after a crash)")
    max_reordered: int = Field(0, ge=0, description="Canaries a run may see out of their source partition's "
                                                    "order (default 0)")
    affinity: bool = Field(True, description="Every canary lands in the target partition with its source "
                                             "partition's number (keyed consumers keep their affinity)")


class Flow(_Model):
    id: StrictStr
    source: StrictStr
    target: StrictStr
    replication_policy: Literal["default", "identity"]
    delivery: Literal["at_least_once", "exactly_once"]
    topics: Names  # Java regexes, each inside the tenant's prefixes (the policy checked)
    groups: Names
    exclude_topics: Names
    exclude_groups: Names
    remote_topic_prefixes: Names
    slo: Slo | None
    probe: Probe | None
    capacity: Capacity | None  # sized from capacity.yaml (model/capacity.py); None: one task, one node

    @property
    def exactly_once(self) -> bool:
        return self.delivery == EXACTLY_ONCE

    @property
    def nodes(self) -> int:
        """The MM2 nodes (processes, Strimzi replicas) that run the flow together."""
        return self.capacity.nodes if self.capacity else 1

    @property
    def internal_rest(self) -> bool:
        """Whether its MM2 needs Connect's internal REST server (KIP-710): followers forward task configs (and,
        exactly once, fencing) to the leader, so a flow run by several nodes or exactly once does."""
        return self.exactly_once or self.nodes > 1

    @property
    def topic_items(self) -> tuple[str, ...]:
        """What the flow's MM2 replicates: its topics and, with an slo, its tenant's probe topic."""
        return (*self.topics, self.probe.topic_item) if self.probe else self.topics

    @cached_property
    def mm2_principal(self) -> str:
        return names.mm2_principal(self.id)

    @cached_property
    def internal_prefix(self) -> str:
        return names.mm2_internal_prefix(self.id)

    @cached_property
    def mm2_topics(self) -> names.Mm2FlowTopics:
        return names.mm2_flow_topics(self.id)

    @cached_property
    def connect(self) -> names.ConnectNames:
        return names.connect_names(self.id)

    @cached_property
    def transactional_ids(self) -> names.Mm2TransactionalIds:
        return names.mm2_transactional_ids(self.id)

    def remote_name(self, topic: str) -> str:
        """`topic` (a name or prefix on the source) as this flow names it on the target."""
        return names.remote_name(self.replication_policy, self.source, topic)


class Tenant(_Model):
    tenant: StrictStr
    classification: Literal["public", "internal", "confidential", "restricted"]
    topic_prefixes: Names
    group_prefixes: Names
    clusters: Names  # where its own topics live (the policy's home clusters)
    namespace: StrictStr
    record_marker: RecordMarker | None
    principals: tuple[Principal, ...]
    flows: tuple[Flow, ...]
    grants_given: tuple[GrantGiven, ...]
    grants_received: tuple[GrantReceived, ...]

    @property
    def name(self) -> str:
        return self.tenant

    @property
    def readers(self) -> tuple[Principal, ...]:
        return tuple(p for p in self.principals if p.reads)

    @property
    def probe_principal(self) -> str | None:
        """Its probe's principal when one of its flows has an slo (names.probe_principal), else None."""
        return names.probe_principal(self.tenant) if any(f.probe for f in self.flows) else None


class MalformedDecision(ValueError):
    """The decision does not have the tenancy's shape: the caller denies."""


class Tenancy:
    """Every tenant the policy decided on, by name, in the decision's order."""

    def __init__(self, tenants: Mapping[str, Tenant]) -> None:
        self.tenants: Mapping[str, Tenant] = dict(tenants)

    def __iter__(self) -> Iterator[Tenant]:
        return iter(self.tenants.values())

    def __len__(self) -> int:
        return len(self.tenants)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tenancy) and self.tenants == other.tenants

    def __repr__(self) -> str:
        return f"Tenancy({len(self.tenants)} tenants)"

    def flows(self) -> Iterator[tuple[Tenant, Flow]]:
        for tenant in self.tenants.values():
            for flow in tenant.flows:
                yield tenant, flow

    def principal_owners(self) -> dict[str, str]:
        """Who owns each principal mm2gov manages: tenants' own, their flows' MM2 and their probes."""
        owners = {p.name: t.tenant for t in self for p in t.principals}
        owners |= {f.mm2_principal: t.tenant for t, f in self.flows()}
        owners |= {t.probe_principal: t.tenant for t in self if t.probe_principal}
        return owners


def parse_tenancy(scopes: Any) -> Tenancy:
    """The decision's `scopes` as a Tenancy; anything but exactly the documented shape is MalformedDecision."""
    if not isinstance(scopes, dict):
        raise MalformedDecision(f"scopes is {type(scopes).__name__}, not an object")
    tenants = {}
    for key, scope in scopes.items():
        try:
            tenant = Tenant.model_validate(scope)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = "/".join(str(p) for p in first["loc"])
            raise MalformedDecision(f"tenant {key!r:.80}: {where}: {first['msg']}") from None
        if tenant.tenant != key:
            raise MalformedDecision(f"tenant {key!r:.80} is named {tenant.tenant!r:.80} inside")
        tenants[key] = tenant
    return Tenancy(tenants)
