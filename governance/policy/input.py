"""The OPA input document built from an Inventory (shape in docs/policies.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from governance.config.loader import Inventory
from governance.config.schema import Tenant
from governance.policy.engine import Violation


def flow_id(tenant: str, source: str, target: str) -> str:
    """Stable id of a tenant flow: names its MM2, its files and its internal topics."""
    return f"{tenant}-{source}-to-{target}"


def build_input(inventory: Inventory) -> dict[str, Any]:
    clusters = {
        name: {"name": name, "bootstrap_servers": c.bootstrap_servers, "zone": c.zone,
               "security": c.security.model_dump()}
        for name, c in inventory.clusters.items()
    }
    return {
        "clusters": clusters,
        "tenants": {name: _tenant(t, inventory) for name, t in inventory.tenants.items()},
        # Rules answer with node paths; `resolve_locations` turns them into file:line here,
        # which keeps the input half the size.
        "locations": {},
    }


def resolve_locations(violations: Iterable[Violation], locations: dict[str, str]) -> tuple[Violation, ...]:
    """Replace each violation's node path by the `file:line` of it or its nearest ancestor."""
    return tuple(sorted({replace(v, location=_resolve(v.location, locations)) for v in violations}))


def _resolve(path: str, locations: dict[str, str]) -> str:
    parts = path.split("/")
    for end in range(len(parts), 0, -1):
        found = locations.get("/".join(parts[:end]))
        if found:
            return found
    return path


def _tenant(tenant: Tenant, inventory: Inventory) -> dict[str, Any]:
    data = tenant.model_dump()
    data["flows"] = [
        {**flow.model_dump(), "id": flow_id(tenant.name, flow.source, flow.target),
         "topic_patterns": [inventory.patterns[r].to_input() for r in flow.topics],
         "group_patterns": [inventory.patterns[r].to_input() for r in flow.groups]}
        for flow in tenant.flows
    ]
    return data
