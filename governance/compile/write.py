"""`mm2gov generate`: write the desired state as files. Same input, same bytes."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path

import yaml

from governance.compile.desired import DesiredState
from governance.compile.k8s_tenants import tenant_manifests
from governance.compile.mm2_logging import log4j2_path, mm2_log4j2
from governance.compile.monitoring import DUMPER
from governance.model.acl import AclBinding

OWNED_DIRS = ("mm2", "acls", "strimzi", "monitoring", "k8s")


def write_outputs(state: DesiredState, out: Path, tenant_secrets: dict[str, list[str]] | None = None) -> list[Path]:
    """Make OUT/mm2, OUT/acls and OUT/strimzi hold exactly the desired state; return its files.

    `tenant_secrets`: the Secrets placed for each tenant in its namespace, which its
    Role in OUT/k8s/tenants may read (none when not given).

    Unchanged files are left as they are (same bytes, same mtime), stale ones removed.
    """
    written: list[Path] = []
    made: set[Path] = set()

    def write(path: Path, text: str) -> None:
        data = text.encode("utf-8")
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        try:
            unchanged = path.read_bytes() == data
        except FileNotFoundError:
            unchanged = False
        if not unchanged:
            path.write_bytes(data)
        written.append(path)

    for flow in state.flows:
        write(out / "mm2" / f"{flow.flow_id}.properties", flow.properties)
        write(out / log4j2_path(flow.flow_id), mm2_log4j2(flow.tenant, flow.flow_id, state.header))
    for cluster, bindings in sorted(state.bindings.items()):
        write(out / "acls" / f"{cluster}.json", acl_document(state.header, cluster, sorted(bindings)))
    for obj in state.strimzi:
        meta = obj["metadata"]
        name = f"{obj['kind'].lower()}-{meta['namespace']}-{meta['name']}.yaml"
        write(out / "strimzi" / name, state.header + "\n" + yaml.dump(obj, Dumper=DUMPER, sort_keys=False))
    for relative, text in sorted(state.monitoring.items()):
        write(out / "monitoring" / relative, text)
    for tenant, text in tenant_manifests(state.tenant_namespaces, tenant_secrets or {}, state.header).items():
        write(out / "k8s" / "tenants" / f"{tenant}.yaml", text)
    keep = set(written)
    for name in OWNED_DIRS:
        for stale in sorted((out / name).rglob("*"), reverse=True) if (out / name).is_dir() else ():
            if stale.is_file() and stale not in keep:
                stale.unlink()
            elif stale.is_dir() and not any(stale.iterdir()):
                stale.rmdir()
    return written


_ROW = ('    {"principal": %s, "host": %s, "resource_type": %s, "resource_name": %s, "pattern_type": %s, '
        '"operation": %s, "permission": %s}')


def acl_document(header: str, cluster: str, bindings: list[AclBinding]) -> str:
    """JSON with one binding per line (the contract's record shape): diffable in review and fast to
    write for 100k+ bindings (each field escaped by the json module's C encoder)."""
    q = encode_basestring_ascii
    rows = ",\n".join(_ROW % (q(b.principal), q(b.host), q(b.resource_type), q(b.resource_name),
                               q(b.pattern_type), q(b.operation), q(b.permission)) for b in bindings)
    return (f'{{\n  "generated": {json.dumps(header.lstrip("# "))},\n  "cluster": {json.dumps(cluster)},\n'
            f'  "bindings": [\n{rows}\n  ]\n}}\n')
