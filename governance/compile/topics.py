"""Remote topics mm2gov creates on targets: the exact topics a flow names.

A flow regex alternative that matches a single name (e.g. `payments\\.refunds`) gives a
remote topic mm2gov can create ahead of MM2 (as many partitions as the source topic) and
declare as a Strimzi KafkaTopic. Pattern alternatives are left to MM2, within its ACLs.
Topics are only ever created, never deleted: they hold tenants' data.
"""

from __future__ import annotations

from dataclasses import dataclass

from governance.config.regex import PatternFacts
from governance.model.tenancy import Tenancy


@dataclass(frozen=True, order=True)
class RemoteTopic:
    target: str
    name: str
    source: str
    source_topic: str
    tenant: str


def remote_topics(tenancy: Tenancy, patterns: dict[str, PatternFacts]) -> list[RemoteTopic]:
    found = set()
    for tenant, flow in tenancy.flows():
        for regex in flow.topics:
            facts = patterns.get(regex)
            for exact in facts.exact_names() if facts else ():
                found.add(RemoteTopic(flow.target, flow.remote_name(exact), flow.source, exact, tenant.tenant))
    return sorted(found)
