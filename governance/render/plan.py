"""Plans for people (text, a Markdown pull-request comment) and scripts (JSON)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable

from governance.plan.diff import PermissionChange, Plan
from governance.plan.topics import ADDED, REMOVED, FlowTopics
from governance.render import violations as render_violations
from governance.render.violations import md_cell


def grouped(changes: list[PermissionChange]) -> list[tuple[str, str, str, str, list[str]]]:
    """(principal, cluster, kind, resource, operations): one line per resource, operations joined."""
    groups: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for change in changes:
        b = change.binding
        kind = b.resource_type.lower() + (" prefix" if b.pattern_type == "PREFIXED" else "")
        groups[(b.principal, change.cluster, kind, b.resource_name)].append(b.operation)
    return [(*key, sorted(ops)) for key, ops in sorted(groups.items())]


KEPT = ("stay on {target} with their data and are no longer updated (mm2gov never deletes topics)")
ROLLOUT = ("To take effect: `mm2gov apply` and `mm2gov generate`, then restart each changed flow's dedicated MM2 "
           "with its regenerated properties (it resumes from its committed offsets; for a second or so it runs its "
           "stored task configs, so records written to a removed topic during the restart may still be copied); "
           "on Strimzi, "
           "`apply --kubeconfig` updates the KafkaMirrorMaker2 in place and the operator reconfigures its "
           "connectors.")


def code_span(value: str) -> str:
    """`value` as Markdown code, whatever backticks a hostile pattern holds (a longer fence than any run)."""
    runs = re.findall("`+", value)
    fence = "`" * (max(map(len, runs), default=0) + 1)
    return f"{fence} {value} {fence}" if runs else f"`{value}`"


def topic_lines(change: FlowTopics, name: Callable[[str], str] = str) -> list[str]:
    """What the change does to the flow's topics, one statement per line; `name` formats patterns and topics."""
    def listing(names: Iterable[str]) -> str:
        return ", ".join(name(n) for n in names) or "none"

    lines = [f"adds pattern {name(p)}" for p in change.patterns_added]
    lines += [f"removes pattern {name(p)}" for p in change.patterns_removed]
    lines += [f"adds exclusion {name(p)}" for p in change.excludes_added]
    lines += [f"removes exclusion {name(p)}" for p in change.excludes_removed]
    if change.live:
        lines += [f"starts replicating existing {change.source} topic {name(t)}" for t in change.topics_started]
        lines += [f"stops replicating {change.source} topic {name(t)}" for t in change.topics_stopped]
        if not change.topics_started and not change.topics_stopped:
            lines.append(f"no existing {change.source} topic starts or stops (checked live)")
    if change.stops_something and not (change.live and not change.remote_stopped):
        kept = (f"remote topics {listing(change.remote_stopped)}" if change.live
                else f"remote topics it already replicated (under {listing(change.remote_prefixes)})")
        lines.append(f"{kept} {KEPT.format(target=change.target)}")
        lines.append(f"still readable on {change.target} by: {listing(change.readers_after)}"
                     + ("" if change.readers_after else " (the flow's READ ACLs go; see permissions)"))
    return lines


def text(plan: Plan, base_label: str) -> str:
    out = [f"Plan against {base_label}"]
    if not plan.has_changes:
        out.append("  no changes to tenants, flows, principals, capacity, quotas or effective permissions")
    out += [f"  + tenant {name}" for name in plan.tenants_added]
    out += [f"  - tenant {name}" for name in plan.tenants_removed]
    out += [f"  ~ tenant {name} (scope changed)" for name in plan.tenants_changed]
    out += [f"  + flow {f['id']} ({f['source']} -> {f['target']})" for f in plan.flows_added]
    out += [f"  - flow {f['id']} ({f['source']} -> {f['target']})" for f in plan.flows_removed]
    out += [f"  + principal {p['principal']} ({p['tenant']})" for p in plan.principals_added]
    out += [f"  - principal {p['principal']} ({p['tenant']})" for p in plan.principals_removed]
    if plan.flow_topics:
        out.append("Flow topics:")
        for change in plan.flow_topics:
            out.append(f"  {_mark(change)} flow {change.flow} ({change.source} -> {change.target})")
            out += [f"      {line}" for line in topic_lines(change)]
        out.append(f"  {ROLLOUT}")
    if plan.capacity:
        out.append("Capacity:")
        out += [f"  ~ {change.phrase()}" for change in plan.capacity]
    if plan.quotas:
        out.append("Client quotas (per broker; `mm2gov apply` sets them):")
        out += [f"  ~ {change.phrase()}" for change in plan.quotas]
    if plan.permissions_gained or plan.permissions_lost:
        out.append("Effective permissions:")
        for principal, cluster, kind, name, ops in grouped(plan.permissions_gained):
            out.append(f"  + {principal} gains {', '.join(ops)} on {cluster} {kind} {name}")
        for principal, cluster, kind, name, ops in grouped(plan.permissions_lost):
            out.append(f"  - {principal} loses {', '.join(ops)} on {cluster} {kind} {name}")
    out.append(f"Violations in head: {render_violations.summary(plan.violations)}"
               f" ({len(plan.new_violations)} new)")
    out += [f"  {v.location}: {v.severity} {v.rule} [{v.tenant or 'cluster'}] {v.message}"
            for v in render_violations.ordered(plan.violations)]
    return "\n".join(out) + "\n"


def markdown(plan: Plan, base_label: str) -> str:
    gained, lost = grouped(plan.permissions_gained), grouped(plan.permissions_lost)
    out = ["### mm2gov plan", "",
           f"Against `{md_cell(base_label)}`: **{len(gained)} permission gain(s), {len(lost)} loss(es)**, "
           f"{len(plan.tenants_added)} tenant(s) added, {len(plan.tenants_removed)} removed, "
           f"{len(plan.flows_added)} flow(s) added, {len(plan.flows_removed)} removed; "
           f"{render_violations.summary(plan.violations)} ({len(plan.new_violations)} new).", ""]
    if gained or lost:
        out += ["#### Effective permissions", "", "| change | principal | operations | cluster | resource |",
                "|---|---|---|---|---|"]
        for verb, rows in (("➕ gains", gained), ("➖ loses", lost)):
            out += [f"| {verb} | `{md_cell(p)}` | {', '.join(ops)} | {c} | {k} `{md_cell(n)}` |"
                    for p, c, k, n, ops in rows]
        out.append("")
    structure = [f"- ➕ tenant `{t}`" for t in plan.tenants_added]
    structure += [f"- ➖ tenant `{t}`" for t in plan.tenants_removed]
    structure += [f"- ✏️ tenant `{t}` scope changed" for t in plan.tenants_changed]
    structure += [f"- ➕ flow `{f['id']}` ({f['source']} → {f['target']})" for f in plan.flows_added]
    structure += [f"- ➖ flow `{f['id']}` ({f['source']} → {f['target']})" for f in plan.flows_removed]
    structure += [f"- ➕ principal `{p['principal']}` ({p['tenant']})" for p in plan.principals_added]
    structure += [f"- ➖ principal `{p['principal']}` ({p['tenant']})" for p in plan.principals_removed]
    if structure:
        out += ["#### Tenants, flows, principals", "", *structure, ""]
    if plan.capacity or plan.quotas:
        out += ["#### Capacity and client quotas", "", *(f"- {md_cell(c.phrase())}" for c in plan.capacity),
                *(f"- quota {md_cell(q.phrase())}" for q in plan.quotas), ""]
    if plan.flow_topics:
        out += ["#### Flow topics", ""]
        for change in plan.flow_topics:
            out.append(f"- {_mark(change)} flow `{md_cell(change.flow)}` ({change.source} → {change.target})")
            out += [f"  - {line}" for line in topic_lines(change, code_span)]
        out += ["", ROLLOUT, ""]
    out.append(render_violations.markdown(plan.violations, "Policy violations in this change"))
    return "\n".join(out)


def _mark(change: FlowTopics) -> str:
    return {ADDED: "+", REMOVED: "-"}.get(change.status, "~")


def as_json(plan: Plan, base_label: str) -> str:
    return json.dumps({"base": base_label, **plan.to_record(),
                       "summary": {"permissions_gained": len(plan.permissions_gained),
                                   "permissions_lost": len(plan.permissions_lost),
                                   "violations": render_violations.summary(plan.violations)}},
                      indent=2) + "\n"


def report(output_format: str, plan: Plan, base_label: str, *, repo: str, tenants: Iterable[str]) -> str:
    """`mm2gov plan`'s output in one of its formats: SARIF and JUnit carry the head's violations."""
    if output_format == "json":
        return as_json(plan, base_label)
    if output_format == "markdown":
        return markdown(plan, base_label)
    if output_format == "sarif":
        return render_violations.sarif(plan.violations, repo)
    if output_format == "junit":
        return render_violations.junit(plan.violations, tenants, suite="mm2gov plan")
    return text(plan, base_label)
