"""`mm2gov size`: what each flow asked, what mm2gov derived for it, and each cluster's budget and headroom.

Pure: it reads the resolved tenancy (each flow's `capacity`, sized once in model/capacity.py) and the repo's
capacity.yaml; nothing is re-derived here but sums per cluster. The renderers are in render/size.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from governance.config.schema import CapacityFile
from governance.model.capacity import Capacity
from governance.model.tenancy import Tenancy


@dataclass(frozen=True)
class FlowSize:
    flow: str
    tenant: str
    source: str
    target: str
    capacity: Capacity | None  # None: no capacity declared (one task, one node, no quota) or not sized


@dataclass(frozen=True)
class Direction:
    """The flows into a cluster (or out of it) that count against its budget, and their catch-up rates."""

    bytes_per_second: int
    flows: tuple[str, ...]
    unbounded: tuple[str, ...]  # flows there without capacity: no quota holds them


@dataclass(frozen=True)
class ClusterSize:
    cluster: str
    brokers: int
    budget: int  # replication_bytes_per_second
    into: Direction
    out_of: Direction

    @property
    def headroom_into(self) -> int:
        return self.budget - self.into.bytes_per_second

    @property
    def headroom_out_of(self) -> int:
        return self.budget - self.out_of.bytes_per_second


@dataclass(frozen=True)
class SizeReport:
    platform: CapacityFile | None
    flows: list[FlowSize] = field(default_factory=list)
    clusters: list[ClusterSize] = field(default_factory=list)


def size_report(tenancy: Tenancy, platform: CapacityFile | None) -> SizeReport:
    flows = sorted((FlowSize(flow.id, tenant.tenant, flow.source, flow.target, flow.capacity)
                    for tenant, flow in tenancy.flows()), key=lambda f: f.flow)

    def direction(alias: str, end: str) -> Direction:
        there = [f for f in flows if getattr(f, end) == alias]
        sized = [f for f in there if f.capacity]
        return Direction(sum(f.capacity.catch_up_bytes_per_second for f in sized if f.capacity),
                         tuple(f.flow for f in sized), tuple(f.flow for f in there if not f.capacity))

    clusters = [ClusterSize(alias, cluster.brokers, cluster.replication_bytes_per_second,
                            direction(alias, "target"), direction(alias, "source"))
                for alias, cluster in sorted((platform.clusters if platform else {}).items())]
    return SizeReport(platform, flows, clusters)
