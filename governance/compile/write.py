"""`mm2gov generate`: write the desired state as files. Same input, same bytes."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Mapping
from functools import partial
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import NoReturn

import yaml

from governance.compile.desired import DesiredState
from governance.compile.fanout import fan_out
from governance.compile.k8s_tenants import tenant_manifests
from governance.compile.mm2_logging import log4j2_path, mm2_log4j2
from governance.compile.strimzi_types import StrimziObject
from governance.errors import ConfigError
from governance.files import YAML_DUMPER, Render
from governance.model.acl import AclBinding
from governance.model.names import is_k8s_name, strimzi_file
from governance.model.quota import ClientQuota

OWNED_DIRS = ("mm2", "acls", "quotas", "strimzi", "monitoring", "k8s")


def write_outputs(state: DesiredState, out: Path, tenant_secrets: dict[str, list[str]] | None = None) -> list[Path]:
    """Make OUT/mm2, OUT/acls, OUT/quotas, OUT/strimzi, OUT/monitoring and OUT/k8s hold exactly the desired
    state; return its files.

    `tenant_secrets`: the Secrets placed for each tenant in its namespace, which its
    Role in OUT/k8s/tenants may read (none when not given).

    Every file is planned (its path, and how to render its text) before the first is written: two outputs of
    one path (two objects of one name) are a ConfigError and nothing is written. Writing never leaves OUT: a
    symbolic link inside it (a file or an owned folder, committed by anyone who can push to a repo holding
    generated files) is refused, so neither a write nor the removal of stale files follows it. Then each
    file is rendered and written by the same process, in forked workers on a large estate (fan_out: no text
    crosses a pipe, both cores render and write). Unchanged files are left as they are (same bytes, same
    mtime), stale ones removed.
    """
    planned = _planned(state, out, tenant_secrets or {})
    existing = _refuse_links(out, planned)
    for folder in dict.fromkeys(path.parent for path in planned):
        folder.mkdir(parents=True, exist_ok=True)
    paths = list(planned)

    def write(index: int) -> None:
        path = paths[index]
        data = planned[path]().encode("utf-8")
        if path not in existing or path.read_bytes() != data:
            path.write_bytes(data)

    fan_out(write, range(len(paths)))
    for name in OWNED_DIRS:
        for stale in sorted((out / name).rglob("*"), reverse=True) if (out / name).is_dir() else ():
            if stale.is_file() and stale not in planned:
                stale.unlink()
            elif stale.is_dir() and not any(stale.iterdir()):
                stale.rmdir()
    return paths


def _planned(state: DesiredState, out: Path, tenant_secrets: dict[str, list[str]]) -> dict[Path, Render]:
    planned: dict[Path, Render] = {}

    def plan(path: Path, render: Render) -> None:
        if path in planned:  # two objects of one name: never let the second silently replace the first
            raise ConfigError(f"generate: two outputs would both be {path.relative_to(out)}; "
                              "`mm2gov validate` names their owners (derived_name_collision)")
        planned[path] = render

    for flow in state.flows:
        plan(out / "mm2" / f"{flow.flow_id}.properties", partial(getattr, flow, "properties"))
        plan(out / log4j2_path(flow.flow_id), partial(mm2_log4j2, flow.tenant, flow.flow_id, state.header))
    for cluster, bindings in sorted(state.bindings.items()):
        plan(out / "acls" / f"{cluster}.json", partial(acl_document, state.header, cluster, bindings))
    for cluster, quotas in sorted(state.quotas.items()):
        plan(out / "quotas" / f"{cluster}.json", partial(quota_document, state.header, cluster, quotas))
    for obj in state.strimzi:
        meta = obj["metadata"]
        if not is_k8s_name(meta["name"]):  # principal_not_kubernetes_name refuses it first; never a path part
            raise ConfigError(f"generate: {obj['kind']} name {meta['name']!r} is not a Kubernetes name; "
                              "`mm2gov validate` names the principal (principal_not_kubernetes_name)")
        plan(out / "strimzi" / strimzi_file(obj["kind"], meta["namespace"], meta["name"]),
             partial(strimzi_document, state.header, obj))
    for relative, render in sorted(state.monitoring.items()):
        plan(out / "monitoring" / relative, render)
    for tenant, render in tenant_manifests(state.tenant_namespaces, tenant_secrets, state.header).items():
        plan(out / "k8s" / "tenants" / f"{tenant}.yaml", render)
    return planned


def _refuse_links(out: Path, planned: Mapping[Path, object]) -> set[Path]:
    """A ConfigError naming the first symbolic link among the owned folders, the planned files and their
    folders under OUT (OUT itself is the caller's choice and may be one); else the planned files that exist.

    Each folder is looked at once (a few dozen), then each planned file once (an lstat, which also says
    whether it exists: no file is opened only to find it missing)."""
    def refuse(part: Path) -> NoReturn:
        raise ConfigError(f"generate: {part.relative_to(out)} in {out} is a symbolic link; mm2gov writes "
                          "only regular files and folders under OUT: remove the link and run generate again")

    checked: set[Path] = set()
    for folder in [*(out / name for name in OWNED_DIRS), *dict.fromkeys(path.parent for path in planned)]:
        for part in (folder, *folder.parents):
            if part == out or part in checked or out not in part.parents:
                break
            checked.add(part)
            if part.is_symlink():
                refuse(part)
    existing: set[Path] = set()
    for path in planned:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(mode):
            refuse(path)
        existing.add(path)
    return existing


_ROW = ('    {"principal": %s, "host": %s, "resource_type": %s, "resource_name": %s, "pattern_type": %s, '
        '"operation": %s, "permission": %s}')


def acl_document(header: str, cluster: str, bindings: Iterable[AclBinding]) -> str:
    """JSON with one binding per line, sorted (the contract's record shape): diffable in review and fast to
    write for 100k+ bindings (each field escaped by the json module's C encoder)."""
    q = encode_basestring_ascii
    rows = ",\n".join(_ROW % (q(b.principal), q(b.host), q(b.resource_type), q(b.resource_name),
                               q(b.pattern_type), q(b.operation), q(b.permission)) for b in sorted(bindings))
    return (f'{{\n  "generated": {json.dumps(header.lstrip("# "))},\n  "cluster": {json.dumps(cluster)},\n'
            f'  "bindings": [\n{rows}\n  ]\n}}\n')


def strimzi_document(header: str, obj: StrimziObject) -> str:
    return header + "\n" + yaml.dump(obj, Dumper=YAML_DUMPER, sort_keys=False)


def quota_document(header: str, cluster: str, quotas: Mapping[str, ClientQuota]) -> str:
    """The client quotas mm2gov sets on one cluster, one principal a line: what `apply` sets on its brokers
    (per broker, Kafka's keys), for review."""
    rows = ",\n".join(f"    {json.dumps({'principal': principal, **quota.values()})}"
                       for principal, quota in sorted(quotas.items()))
    return (f'{{\n  "generated": {json.dumps(header.lstrip("# "))},\n  "cluster": {json.dumps(cluster)},\n'
            f'  "quotas": [\n{rows}\n  ]\n}}\n')
