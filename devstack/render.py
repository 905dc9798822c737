"""`mm2gov devstack up|status`: what runs where, each component's health, its log."""

from __future__ import annotations

import json
from typing import Any


def as_json(description: dict[str, Any], health: dict[str, str]) -> str:
    """The stack's description with each component's health added (a component only probed gets one too)."""
    components = {name: dict(info) for name, info in description["components"].items()}
    for name, state in health.items():
        components.setdefault(name, {})["health"] = state
    return json.dumps({**description, "components": components}, indent=2) + "\n"


def text(description: dict[str, Any], health: dict[str, str]) -> str:
    out = [f"run directory: {description['run_dir']}",
           f"CA certificate: {description['ca']}  (credentials: {description['secrets_file']}, mode 0600)"]
    for name, info in description["components"].items():
        endpoint = info.get("endpoint") or info.get("properties", "")
        out.append(f"  {name:<16} {health.get(name, '?'):<9} pid {info.get('pid', '-'):<8} {endpoint}")
        out.append(f"  {'':<16} log: {info.get('log', '-')}")
    return "\n".join(out) + "\n"
