"""Decision scopes written by hand for unit tests, complete as the policy returns them (docs/policies.md
"Decision"), and the resolved tenancy parsed from them by the product's own parser: a test that leaves a
field out fails in `parse_tenancy`, as a policy that did would deny."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from governance.model.names import flow_id, remote_prefix
from governance.model.tenancy import Flow, Tenancy, parse_tenancy

TOPIC_OPERATIONS = {"read": {"READ", "DESCRIBE"}, "write": {"WRITE", "DESCRIBE"}}  # as scopes.rego gives them


def principal_scope(name: str, access: Sequence[str], quota: dict[str, int] | None = None) -> dict[str, Any]:
    return {"name": name, "access": list(access),
            "topic_operations": sorted({op for a in access for op in TOPIC_OPERATIONS[a]}),
            "group_operations": ["READ"] if "read" in access else [], "quota": quota}


def flow_scope(tenant: str, source: str = "onprem", target: str = "cloud", *, topics: Sequence[str] = (),
               groups: Sequence[str] = (), prefixes: Sequence[str] | None = None, policy: str = "default",
               delivery: str = "at_least_once", exclude_topics: Sequence[str] = (),
               exclude_groups: Sequence[str] = (), slo: dict[str, Any] | None = None,
               probe: dict[str, str] | None = None, capacity: dict[str, Any] | None = None) -> dict[str, Any]:
    prefixes = [f"{tenant}."] if prefixes is None else list(prefixes)
    return {"id": flow_id(tenant, source, target), "source": source, "target": target, "replication_policy": policy,
            "delivery": delivery, "topics": list(topics) or [f"{tenant}\\..*"], "groups": list(groups),
            "exclude_topics": list(exclude_topics), "exclude_groups": list(exclude_groups),
            "remote_topic_prefixes": [remote_prefix(policy, source) + p for p in prefixes], "slo": slo,
            "probe": probe, "capacity": capacity}


def tenant_scope(name: str, prefixes: Sequence[str] | None = None, *,
                 principals: Iterable[tuple[str, Sequence[str]]] | None = None, groups: Sequence[str] = (),
                 clusters: Sequence[str] = ("onprem",), flows: Sequence[dict[str, Any]] = (),
                 grants: Sequence[dict[str, Any]] = (), received: Sequence[dict[str, Any]] = (),
                 classification: str = "internal") -> dict[str, Any]:
    principals = [(f"User:{name}-app", ["read", "write"])] if principals is None else principals
    return {"tenant": name, "classification": classification,
            "topic_prefixes": list(prefixes) if prefixes is not None else [f"{name}."],
            "group_prefixes": list(groups), "clusters": list(clusters), "namespace": name, "record_marker": None,
            "principals": [principal_scope(n, a) for n, a in principals], "flows": list(flows),
            "grants_given": list(grants), "grants_received": list(received)}


def tenancy(*scopes: dict[str, Any]) -> Tenancy:
    return parse_tenancy({scope["tenant"]: scope for scope in scopes})


def model_flow(tenant: str, source: str = "onprem", target: str = "cloud", **fields: Any) -> Flow:
    return Flow.model_validate(flow_scope(tenant, source, target, **fields))
