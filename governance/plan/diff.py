"""The plan between a base and a head governance repo. Pure functions over decisions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from governance.compile.acls import ClusterBindings, desired_bindings
from governance.compile.quotas import desired_quotas
from governance.model.acl import AclBinding
from governance.model.capacity import Capacity
from governance.model.quota import QuotaChange
from governance.model.tenancy import Tenancy
from governance.plan.topics import FlowTopics, flow_topic_changes
from governance.policy.engine import Decision, Violation


class PermissionChange(NamedTuple):
    cluster: str
    binding: AclBinding

    def phrase(self, verb: str) -> str:
        b = self.binding
        kind = b.resource_type.lower() + (" prefix" if b.pattern_type == "PREFIXED" else "")
        return f"{b.principal} {verb} {b.operation} on {self.cluster} {kind} {b.resource_name}"

    def to_record(self) -> dict[str, str]:
        return {"cluster": self.cluster, **self.binding.to_record()}


class CapacityChange(NamedTuple):
    """A flow whose sizing changes (model/capacity.py): added, removed or changed capacity."""

    flow: str
    tenant: str
    before: Capacity | None
    after: Capacity | None

    def phrase(self) -> str:
        def shown(sized: Capacity | None) -> str:
            if sized is None:
                return "no capacity (1 task, 1 node, no quota)"
            return (f"{sized.catch_up_bytes_per_second} bytes/s catch-up, {sized.tasks} task(s) on {sized.nodes} "
                    f"node(s) of {sized.cpu} CPU, {sized.memory}, {sized.heap} heap")
        return f"flow {self.flow}: {shown(self.before)} -> {shown(self.after)}"

    def to_record(self) -> dict[str, Any]:
        return {"flow": self.flow, "tenant": self.tenant,
                "before": self.before.model_dump() if self.before else None,
                "after": self.after.model_dump() if self.after else None}


@dataclass
class Plan:
    tenants_added: list[str] = field(default_factory=list)
    tenants_removed: list[str] = field(default_factory=list)
    tenants_changed: list[str] = field(default_factory=list)
    flows_added: list[dict[str, str]] = field(default_factory=list)
    flows_removed: list[dict[str, str]] = field(default_factory=list)
    flow_topics: list[FlowTopics] = field(default_factory=list)  # patterns and topics a flow starts or stops
    principals_added: list[dict[str, str]] = field(default_factory=list)
    principals_removed: list[dict[str, str]] = field(default_factory=list)
    permissions_gained: list[PermissionChange] = field(default_factory=list)
    permissions_lost: list[PermissionChange] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    new_violations: list[Violation] = field(default_factory=list)
    capacity: list[CapacityChange] = field(default_factory=list)
    quotas: list[QuotaChange] = field(default_factory=list)

    @property
    def has_changes(self) -> bool:
        return any((self.tenants_added, self.tenants_removed, self.tenants_changed, self.flows_added,
                    self.flows_removed, self.flow_topics, self.principals_added, self.principals_removed,
                    self.permissions_gained, self.permissions_lost, self.capacity, self.quotas))

    def to_record(self) -> dict[str, Any]:
        return {
            "tenants": {"added": self.tenants_added, "removed": self.tenants_removed,
                        "changed": self.tenants_changed},
            "flows": {"added": self.flows_added, "removed": self.flows_removed,
                      "topics": [c.to_record() for c in self.flow_topics]},
            "principals": {"added": self.principals_added, "removed": self.principals_removed},
            "permissions": {"gained": [c.to_record() for c in self.permissions_gained],
                            "lost": [c.to_record() for c in self.permissions_lost]},
            "capacity": [c.to_record() for c in self.capacity],
            "quotas": [q.to_record() for q in self.quotas],
            "violations": [v.to_record() for v in self.violations],
            "new_violations": [v.to_record() for v in self.new_violations],
        }


def permission_diff(base: Decision, head: Decision, before: ClusterBindings | None = None,
                    after: ClusterBindings | None = None) -> tuple[list[PermissionChange], list[PermissionChange]]:
    """(gained, lost), diffed per cluster so only the changes are wrapped (estates hold 100k+ bindings).
    `before`, `after`: the base's and the head's desired bindings, when the caller has them."""
    before = desired_bindings(base.tenancy) if before is None else before
    after = desired_bindings(head.tenancy) if after is None else after
    gained, lost = [], []
    for cluster in sorted(set(before) | set(after)):
        old, new = before.get(cluster, set()), after.get(cluster, set())
        gained += [PermissionChange(cluster, b) for b in new - old]
        lost += [PermissionChange(cluster, b) for b in old - new]
    return sorted(gained), sorted(lost)


def _flows(tenancy: Tenancy) -> dict[str, dict[str, str]]:
    return {f.id: {"id": f.id, "tenant": t.tenant, "source": f.source, "target": f.target} for t, f in tenancy.flows()}


def capacity_changes(was: Tenancy, now: Tenancy) -> list[CapacityChange]:
    """Flows whose capacity (as sized) differs between base and head, a flow without capacity on one side
    included; flows added or removed without capacity are not capacity changes."""
    before = {f.id: (t.tenant, f.capacity) for t, f in was.flows()}
    after = {f.id: (t.tenant, f.capacity) for t, f in now.flows()}
    changes = []
    for flow in sorted(set(before) | set(after)):
        tenant = (after.get(flow) or before[flow])[0]
        old, new = before.get(flow, (tenant, None))[1], after.get(flow, (tenant, None))[1]
        if old != new:
            changes.append(CapacityChange(flow, tenant, old, new))
    return changes


def quota_changes(was: Tenancy, now: Tenancy) -> list[QuotaChange]:
    """Quotas (compile/quotas.py) set, changed or removed, per cluster and principal."""
    before, after = desired_quotas(was), desired_quotas(now)
    changes = []
    for cluster in sorted(set(before) | set(after)):
        old, new = before.get(cluster, {}), after.get(cluster, {})
        changes += [QuotaChange(cluster, p, old.get(p), new.get(p))
                    for p in sorted(set(old) | set(new)) if old.get(p) != new.get(p)]
    return changes


def _principals(tenancy: Tenancy) -> set[tuple[str, str]]:
    return {(t.tenant, p.name) for t in tenancy for p in t.principals}


def make_plan(base: Decision, head: Decision, source_topics: dict[str, frozenset[str]] | None = None,
              head_bindings: ClusterBindings | None = None) -> Plan:
    """`source_topics` (source alias -> topic names, read live) adds which existing topics flows start or stop;
    `head_bindings`: desired_bindings(head.tenancy), when the caller computed it while the base was decided."""
    was, now = base.tenancy, head.tenancy
    base_flows, head_flows = _flows(was), _flows(now)
    before = desired_bindings(was)  # once: the diff and the flows' readers read them
    after = desired_bindings(now) if head_bindings is None else head_bindings
    gained, lost = permission_diff(base, head, before, after)
    shared = set(was.tenants) & set(now.tenants)
    known_base = {(v.rule, v.tenant, v.message) for v in base.violations}
    return Plan(
        tenants_added=sorted(set(now.tenants) - set(was.tenants)),
        tenants_removed=sorted(set(was.tenants) - set(now.tenants)),
        tenants_changed=sorted(t for t in shared if was.tenants[t] != now.tenants[t]),
        flows_added=[head_flows[f] for f in sorted(set(head_flows) - set(base_flows))],
        flows_removed=[base_flows[f] for f in sorted(set(base_flows) - set(head_flows))],
        flow_topics=flow_topic_changes(was, now, source_topics, after),
        principals_added=[{"tenant": t, "principal": p} for t, p in sorted(_principals(now) - _principals(was))],
        principals_removed=[{"tenant": t, "principal": p} for t, p in sorted(_principals(was) - _principals(now))],
        permissions_gained=gained,
        permissions_lost=lost,
        violations=list(head.violations),
        new_violations=[v for v in head.violations if (v.rule, v.tenant, v.message) not in known_base],
        capacity=capacity_changes(was, now),
        quotas=quota_changes(was, now),
    )
