"""`mm2gov generate`: write the desired state as files. Same input, same bytes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from governance.compile.desired import DesiredState

OWNED_DIRS = ("mm2", "acls", "strimzi")


def write_outputs(state: DesiredState, out: Path) -> list[Path]:
    """Replace OUT/mm2, OUT/acls and OUT/strimzi with the desired state; return the files written."""
    for name in OWNED_DIRS:
        shutil.rmtree(out / name, ignore_errors=True)
    written: list[Path] = []

    def write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)

    for flow in state.flows:
        write(out / "mm2" / f"{flow.flow_id}.properties", flow.properties)
    for cluster, bindings in sorted(state.bindings.items()):
        document = {"generated": state.header.lstrip("# "), "cluster": cluster,
                    "bindings": [b.to_record() for b in sorted(bindings)]}
        write(out / "acls" / f"{cluster}.json", json.dumps(document, indent=2) + "\n")
    for obj in state.strimzi:
        meta = obj["metadata"]
        name = f"{obj['kind'].lower()}-{meta['namespace']}-{meta['name']}.yaml"
        write(out / "strimzi" / name, state.header + "\n" + yaml.safe_dump(obj, sort_keys=False))
    return written
