"""`mm2gov doctor`: each external tool, where it was found and its version, or the one line to fix it."""

from __future__ import annotations

import dataclasses
import json

from governance.tools import ToolStatus


def all_found(statuses: list[ToolStatus]) -> bool:
    return all(s.found for s in statuses)


def as_json(statuses: list[ToolStatus]) -> str:
    return json.dumps({"ok": all_found(statuses), "tools": [dataclasses.asdict(s) for s in statuses]}, indent=2)


def text(statuses: list[ToolStatus]) -> str:
    out = []
    for s in statuses:
        if s.found:
            out.append(f"ok       {s.name:<16} {s.version or '?':<10} {s.location}  ({s.source})")
            out += [f"         {'':<16} {d}" for d in s.details]
        else:
            out.append(f"MISSING  {s.name:<16} {s.remedy}")
        out.append(f"         {'':<16} used by: {s.used_by}")
    missing = [s.name for s in statuses if not s.found]
    out.append("everything mm2gov runs was found" if not missing else f"missing: {', '.join(missing)}")
    return "\n".join(out)
