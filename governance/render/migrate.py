"""`mm2gov migrate` output: per source topic-partition where each flow resumes, what is not migrated, what
is refused, and a one-line verdict; or one JSON document (schema `mm2gov.migrate/v1`, docs/migration.md).
Nothing of the legacy file is shown but its aliases, topic and group patterns and offsets topic."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from governance.migrate.live import Migration
    from governance.migrate.offsets import SourcePosition
    from governance.migrate.plan import Refusal

SCHEMA = "mm2gov.migrate/v1"
HEADER = ("FLOW", "SOURCE PARTITION", "RESUMES AT", "SOURCE start/end", "LEFT TO COPY", "OFFSETS TOPIC")


def verdict(migration: Migration, applied: dict[str, int] | None) -> str:
    plan = migration.plan
    if not plan.ok:
        return f"REFUSED: {len(plan.refusals)} refusal(s); nothing was written"
    flows = len({s.flow for s in plan.seeds})
    if migration.already and not migration.pending():
        return "ALREADY SEEDED: every flow's offsets topic holds exactly its seeds; nothing to write"
    if applied is not None:
        return (f"APPLIED: {sum(applied.values())} seed(s) written and read back in {len(applied)} offsets "
                f"topic(s); start the flows' MM2s now")
    return f"OK: {len(plan.seeds)} seed(s) for {flows} flow(s); `migrate --apply` writes them"


def _marks(migration: Migration, topic: str, partition: int) -> tuple[int, int] | None:
    return migration.facts.watermarks.get((topic, partition))


def _position(position: SourcePosition) -> dict[str, Any]:
    return {"topic": position.topic, "partition": position.partition, "offset": position.offset,
            "resumes_at": position.resumes_at}


def _refusal(refusal: Refusal) -> dict[str, Any]:
    return {"kind": refusal.kind, "topic": refusal.topic, "partition": refusal.partition, "detail": refusal.detail}


def as_json(migration: Migration, applied: dict[str, int] | None = None) -> str:
    legacy, plan = migration.legacy, migration.plan
    seeds = []
    for seed in plan.seeds:
        marks = _marks(migration, seed.position.topic, seed.position.partition)
        seeds.append({"flow": seed.flow, "offsets_topic": seed.offsets_topic, **_position(seed.position),
                      "source_log_start": marks[0] if marks else None, "source_log_end": marks[1] if marks else None,
                      "already_seeded": seed.flow in migration.already})
    document = {
        "schema": SCHEMA, "source": legacy.source, "target": legacy.target,
        "legacy": {"offsets_topic": legacy.offsets_topic, "connect_group": legacy.group,
                   "records": migration.facts.legacy_records, "positions": len(migration.facts.legacy),
                   "replication_policy": legacy.policy, "topics": list(legacy.topics), "groups": list(legacy.groups)},
        "flows": [{"tenant": f.tenant, "flow": f.flow, "offsets_topic": f.offsets_topic} for f in migration.flows],
        "ok": plan.ok, "applied": applied is not None, "written": applied or {}, "verdict": verdict(migration, applied),
        "seeds": seeds,
        "untaken": [_position(p) for p in plan.untaken],
        "gone": [_position(p) for p in plan.gone],
        "accepted_loss": [_refusal(r) for r in plan.lost],
        "refusals": [_refusal(r) for r in plan.refusals],
    }
    return json.dumps(document, indent=2) + "\n"


def text(migration: Migration, applied: dict[str, int] | None = None) -> str:
    legacy, plan, facts = migration.legacy, migration.plan, migration.facts
    lines = [f"cut-over of {legacy.source} -> {legacy.target} from the legacy MM2 (offsets topic "
             f"{legacy.offsets_topic}: {facts.legacy_records} records, {len(facts.legacy)} positions) to "
             f"{len(migration.flows)} flow(s): " + ", ".join(f.flow for f in migration.flows),
             f"legacy topics: {', '.join(legacy.topics)}; groups: {', '.join(legacy.groups)} (reported only)", ""]
    rows = [HEADER]
    for seed in plan.seeds:
        position = seed.position
        marks = _marks(migration, position.topic, position.partition)
        rows.append((seed.flow, f"{position.topic}[{position.partition}]", str(position.resumes_at),
                     f"{marks[0]}/{marks[1]}" if marks else "-",
                     str(max(marks[1] - position.resumes_at, 0)) if marks else "-",
                     seed.offsets_topic + (" (already seeded)" if seed.flow in migration.already else "")))
    if len(rows) > 1:
        widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
        lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
                  for row in rows]
    else:
        lines.append("no seed")
    notes = [f"not migrated (no flow takes it): {p.topic}[{p.partition}] at {p.resumes_at}" for p in plan.untaken]
    notes += [f"not migrated (no longer on the source): {p.topic}[{p.partition}] at {p.resumes_at}"
              for p in plan.gone]
    notes += [f"accepted loss ({r.kind}): {_where(r)}: {r.detail}" for r in plan.lost]
    notes += [f"refused ({r.kind}): {_where(r)}: {r.detail}" for r in plan.refusals]
    if notes:
        lines += ["", *notes]
    lines += ["", verdict(migration, applied)]
    return "\n".join(lines) + "\n"


def _where(refusal: Refusal) -> str:
    if refusal.partition is None:
        return refusal.topic or "-"
    return f"{refusal.topic}[{refusal.partition}]"
