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

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from governance.compile.acls import ClusterBindings, desired_bindings
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


class _Readers:
    """Who may READ topic names on one cluster: its tenant principals' READ bindings (never an MM2's), by
    resource name. A name's readers are one lookup for its LITERAL bindings and one per length its PREFIXED
    bindings have (a handful), so asking for every changed flow costs the same however many bindings the
    cluster has (a pass over them all per flow made the plan grow with changed flows times bindings)."""

    def __init__(self, bindings: Iterable[AclBinding], mm2s: set[str]) -> None:
        self.prefixed: dict[str, set[str]] = defaultdict(set)
        self.literal: dict[str, set[str]] = defaultdict(set)
        for b in bindings:
            if b.resource_type == "TOPIC" and b.operation == "READ" and b.principal not in mm2s:
                (self.prefixed if b.pattern_type == "PREFIXED" else self.literal)[b.resource_name].add(b.principal)
        self.lengths = sorted({len(name) for name in self.prefixed})

    def of(self, name: str) -> set[str]:
        """The principals a binding lets read `name`: PREFIXED on a leading part of it, or LITERAL on it."""
        found = set(self.literal.get(name, ()))
        for length in self.lengths:
            if length > len(name):
                break
            found |= self.prefixed.get(name[:length], set())
        return found

    def of_all(self, names: Sequence[str]) -> tuple[str, ...]:
        """Tenant principals with READ on every one of `names` (none for no names)."""
        return tuple(sorted(set.intersection(*(self.of(n) for n in names)))) if names else ()


def flow_topic_changes(base: Tenancy, head: Tenancy, source_topics: Mapping[str, frozenset[str]] | None = None,
                       head_bindings: ClusterBindings | None = None) -> list[FlowTopics]:
    """Per flow whose patterns differ (or that is added or removed): what it starts and stops replicating.
    `source_topics` (source alias -> its topic names) makes the result live; without it, patterns only.
    `head_bindings`: the head's desired bindings when the caller has them (computed here if a flow needs them)."""
    before, after = _flows(base), _flows(head)
    mm2s = {flow.mm2_principal for _, flow in after.values()}
    readers: dict[str, _Readers] = {}  # per target cluster, built the first time a flow there needs it

    def readers_of(target: str, prefixes: Sequence[str]) -> tuple[str, ...]:
        nonlocal head_bindings
        if target not in readers:
            head_bindings = desired_bindings(head) if head_bindings is None else head_bindings
            readers[target] = _Readers(head_bindings.get(target, set()), mm2s)
        return readers[target].of_all(prefixes)

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
        change = FlowTopics(
            flow_id, tenant.tenant, flow.source, flow.target, status,
            tuple(p for p in new_patterns if p not in old_patterns),
            tuple(p for p in old_patterns if p not in new_patterns),
            remote_prefixes=tuple(prefixes),
            readers_after=readers_of(flow.target, prefixes) if old else (),
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
