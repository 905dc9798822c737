"""What a change to a flow's topic patterns does: patterns (and the flow's own exclusions) added and removed,
the source topics they start or stop replicating, and what becomes of the remote topics a removal leaves on
the target. Pure.

MM2 replicates a source topic when one of the flow's `topics` patterns matches its whole name and no
`topics.exclude` pattern does (compile/mm2.py writes both); the live topic lists come from the CLI.
Removing a pattern never deletes anything: mm2gov never deletes topics (compile/topics.py), so the remote
topics stay on the target with their data and are simply no longer updated. Who may still read them follows
from the head's ACLs (readers below): a pattern removed from a flow that stays keeps the tenant's READ on the
flow's remote prefix (it comes from the tenant's topic prefixes, not the patterns); a removed flow loses it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from governance.compile.acls import desired_bindings
from governance.compile.mm2 import TOPICS_EXCLUDE, topics_exclude
from governance.config.regex import RegexProblem, java_list_matcher, split_list
from governance.model.acl import AclBinding
from governance.model.tenancy import Flow, Tenancy, Tenant

ADDED, REMOVED, CHANGED = "added", "removed", "changed"


@dataclass(frozen=True)
class FlowTopics:
    """One flow's topic change. `live` is False when no topic list was read: then only the patterns are known."""

    flow: str
    tenant: str
    source: str
    target: str
    status: str  # ADDED, REMOVED (the whole flow) or CHANGED (its patterns)
    patterns_added: tuple[str, ...]
    patterns_removed: tuple[str, ...]
    live: bool = False
    topics_started: tuple[str, ...] = ()  # existing source topics the head replicates and the base did not
    topics_stopped: tuple[str, ...] = ()  # existing source topics the base replicated and the head does not
    remote_stopped: tuple[str, ...] = ()  # their remote topics on the target: kept, no longer updated
    remote_prefixes: tuple[str, ...] = ()  # where this flow's remote topics live on the target
    readers_after: tuple[str, ...] = ()  # tenant principals that can still READ those prefixes after the change
    excludes_added: tuple[str, ...] = ()  # the flow's own `exclude_topics` items (legacy blacklists land there)
    excludes_removed: tuple[str, ...] = ()

    @property
    def stops_something(self) -> bool:
        return bool(self.patterns_removed or self.excludes_added)

    def to_record(self) -> dict[str, Any]:
        return {"flow": self.flow, "tenant": self.tenant, "source": self.source, "target": self.target,
                "status": self.status,
                "patterns": {"added": list(self.patterns_added), "removed": list(self.patterns_removed)},
                "excludes": {"added": list(self.excludes_added), "removed": list(self.excludes_removed)},
                "live": self.live,
                "topics": {"started": list(self.topics_started), "stopped": list(self.topics_stopped)},
                "remote_topics_kept": list(self.remote_stopped),
                "remote_prefixes": list(self.remote_prefixes),
                "remote_readers_after": list(self.readers_after)}


def _flows(tenancy: Tenancy) -> dict[str, tuple[Tenant, Flow]]:
    return {flow.id: (tenant, flow) for tenant, flow in tenancy.flows()}


def replicated(patterns: Sequence[str], topics: frozenset[str], prefixes: Sequence[str],
               exclude: str = TOPICS_EXCLUDE) -> set[str]:
    """The topics MM2 replicates with these `topics` patterns (and the flow's `topics.exclude`), among those its
    ACLs let it read: the tenant's own prefixes. So a hostile `.*` lists no neighbour's topic name in a plan."""
    included: Callable[[str], bool] = java_list_matcher(patterns)
    excluded = java_list_matcher(split_list(exclude))
    return {t for t in topics if t.startswith(tuple(prefixes)) and included(t) and not excluded(t)}


def _covers(binding: AclBinding, name: str) -> bool:
    if binding.pattern_type == "PREFIXED":
        return name.startswith(binding.resource_name)
    return binding.resource_name == name


def _readers(head: dict[str, set[AclBinding]], mm2s: set[str], target: str,
             prefixes: Sequence[str]) -> tuple[str, ...]:
    """Tenant principals (never an MM2's) with READ on every one of these prefixes on the target in the head."""
    reads = [b for b in head.get(target, set())
             if b.resource_type == "TOPIC" and b.operation == "READ" and b.principal not in mm2s]
    if not prefixes:
        return ()
    return tuple(sorted(set.intersection(*({b.principal for b in reads if _covers(b, p)} for p in prefixes))))


def flow_topic_changes(base: Tenancy, head: Tenancy,
                       source_topics: Mapping[str, frozenset[str]] | None = None) -> list[FlowTopics]:
    """Per flow whose patterns differ (or that is added or removed): what it starts and stops replicating.
    `source_topics` (source alias -> its topic names) makes the result live; without it, patterns only."""
    before, after = _flows(base), _flows(head)
    head_bindings: dict[str, set[AclBinding]] | None = None  # computed only if a flow loses patterns
    mm2s = {flow.mm2_principal for _, flow in after.values()}
    changes = []
    for flow_id in sorted(set(before) | set(after)):
        old, new = before.get(flow_id), after.get(flow_id)
        old_patterns = list(old[1].topics) if old else []
        new_patterns = list(new[1].topics) if new else []
        old_excludes = list(old[1].exclude_topics) if old else []
        new_excludes = list(new[1].exclude_topics) if new else []
        # MM2 ORs the items of each list: order is no change
        if old and new and set(old_patterns) == set(new_patterns) and set(old_excludes) == set(new_excludes):
            continue
        latest, earliest = new or old, old or new  # the flow as it is after, else before; before, else after
        assert latest is not None and earliest is not None  # flow_id is a key of before or after
        tenant, flow = latest
        status = ADDED if old is None else REMOVED if new is None else CHANGED
        prefixes = earliest[1].remote_topic_prefixes
        if old and head_bindings is None:
            head_bindings = desired_bindings(head)
        change = FlowTopics(
            flow_id, tenant.tenant, flow.source, flow.target, status,
            tuple(p for p in new_patterns if p not in old_patterns),
            tuple(p for p in old_patterns if p not in new_patterns),
            remote_prefixes=tuple(prefixes),
            readers_after=_readers(head_bindings or {}, mm2s, flow.target, prefixes) if old else (),
            excludes_added=tuple(e for e in new_excludes if e not in old_excludes) if old and new else (),
            excludes_removed=tuple(e for e in old_excludes if e not in new_excludes) if old and new else ())
        topics = (source_topics or {}).get(flow.source)
        if topics is not None:
            try:
                was = replicated(old_patterns, topics, old[0].topic_prefixes if old else [],
                                 topics_exclude(old_excludes) if old else TOPICS_EXCLUDE)
                now = replicated(new_patterns, topics, new[0].topic_prefixes if new else [],
                                 topics_exclude(new_excludes) if new else TOPICS_EXCLUDE)
            except RegexProblem:  # outside the grammar: a violation the plan lists; patterns only here
                changes.append(change)
                continue
            stopped = sorted(was - now)
            change = replace(change, live=True, topics_started=tuple(sorted(now - was)),
                             topics_stopped=tuple(stopped),
                             remote_stopped=tuple(earliest[1].remote_name(t) for t in stopped))
        changes.append(change)
    return changes
