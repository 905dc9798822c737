"""Load a governance repo: YAML with the line of every node, schema, semantic checks.

Every problem names file, line and key; all problems of a repo are reported
together (`InvalidConfig`, exit 2), never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from governance.config.regex import PatternFacts, RegexProblem, analyse
from governance.config.schema import Cluster, ClustersFile, Tenant
from governance.errors import ConfigError

NodePath = tuple[str | int, ...]
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~10x faster, same nodes


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    message: str

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class InvalidConfig(ConfigError):
    """One or more problems in the governance repo; `str()` lists one per line."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"invalid governance repo ({len(problems)} {noun}):\n"
                         + "\n".join(f"  {p}" for p in problems))


@dataclass
class Document:
    """One YAML file: its data and the line of each node path."""

    file: str
    data: Any
    lines: dict[NodePath, int] = field(default_factory=dict)

    def line(self, path: NodePath) -> int | None:
        """The line of `path`, else of its nearest ancestor."""
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            path = path[:-1]


@dataclass(frozen=True)
class Inventory:
    """A loaded, schema-valid governance repo."""

    root: Path
    clusters: dict[str, Cluster]
    tenants: dict[str, Tenant]
    tenant_files: dict[str, str]
    locations: dict[str, str]  # "tenants/payments/flows/0/topics/1" -> "tenants/payments.yaml:12"
    patterns: dict[str, PatternFacts]
    org_policies: tuple[Path, ...] = ()


def dotted(path: NodePath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def read_yaml(path: Path, file: str, problems: list[Problem]) -> Document | None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        problems.append(Problem(file, None, "not UTF-8 text"))
        return None
    except OSError as exc:
        problems.append(Problem(file, None, f"cannot read: {exc.strerror}"))
        return None
    loader = SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problems.append(Problem(file, mark.line + 1 if mark else None, f"YAML syntax: {exc.problem or exc}"))
        return None
    except yaml.YAMLError as exc:
        problems.append(Problem(file, None, f"YAML: {exc}"))
        return None
    finally:
        loader.dispose()
    document = Document(file, data)
    if node is not None:
        _index_lines(node, (), document, problems)
    return document


def _index_lines(node: yaml.Node, path: NodePath, document: Document, problems: list[Problem]) -> None:
    document.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in seen:
                problems.append(Problem(document.file, key_node.start_mark.line + 1,
                                        f"{dotted((*path, key))}: duplicate key '{key}'"))
            seen.add(key)
            document.lines[(*path, key)] = key_node.start_mark.line + 1
            _index_lines(value_node, (*path, key), document, problems)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _index_lines(item, (*path, index), document, problems)


def validate_model(model: type[BaseModel], document: Document, problems: list[Problem]) -> Any:
    if not isinstance(document.data, dict):
        problems.append(Problem(document.file, document.line(()), "expected a mapping at the top level"))
        return None
    try:
        return model.model_validate(document.data)
    except ValidationError as exc:
        for error in exc.errors(include_url=False, include_input=False):
            path = tuple(p for p in error["loc"] if p != "[key]")
            problems.append(Problem(document.file, document.line(path), _describe(error, path)))
        return None


def _describe(error: dict[str, Any], path: NodePath) -> str:
    kind, message = error["type"], error["msg"].removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return f"{dotted(path)}: unknown key '{path[-1]}'"
    if kind == "missing":
        return f"{dotted(path)}: missing required key '{path[-1]}'"
    if "[key]" in error["loc"]:
        return f"{dotted(path)}: invalid name '{path[-1]}': {message}"
    return f"{dotted(path)}: {message}" if path else message


def load_inventory(root: Path) -> Inventory:
    """Load and check `root`; raise InvalidConfig listing every problem."""
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"{root}: not a directory (expected a governance repo with clusters.yaml and tenants/)")
    problems: list[Problem] = []
    locations: dict[str, str] = {}

    clusters: dict[str, Cluster] = {}
    clusters_path = root / "clusters.yaml"
    if not clusters_path.is_file():
        problems.append(Problem("clusters.yaml", None, "missing: a governance repo needs clusters.yaml"))
    else:
        document = read_yaml(clusters_path, "clusters.yaml", problems)
        parsed = validate_model(ClustersFile, document, problems) if document else None
        if parsed is not None:
            clusters = dict(parsed.clusters)
            _record_locations(document, "", locations)

    tenants: dict[str, Tenant] = {}
    tenant_files: dict[str, str] = {}
    tenant_docs: dict[str, Document] = {}
    for path in sorted([*root.glob("tenants/*.yaml"), *root.glob("tenants/*.yml")]):
        file = path.relative_to(root).as_posix()
        document = read_yaml(path, file, problems)
        tenant = validate_model(Tenant, document, problems) if document else None
        if tenant is None:
            continue
        if tenant.name in tenants:
            problems.append(Problem(file, document.line(("name",)),
                                    f"name: tenant '{tenant.name}' is already defined in {tenant_files[tenant.name]}"))
            continue
        tenants[tenant.name] = tenant
        tenant_files[tenant.name] = file
        tenant_docs[tenant.name] = document
        _record_locations(document, f"tenants/{tenant.name}", locations)

    patterns: dict[str, PatternFacts] = {}
    for name, tenant in tenants.items():
        problems += _check_tenant(tenant, tenant_docs[name], clusters, patterns, clusters_loaded=bool(clusters))
    if problems:
        raise InvalidConfig(problems)
    org = tuple(sorted(p for p in root.glob("policies/*.rego") if not p.name.endswith("_test.rego")))
    return Inventory(root, clusters, tenants, tenant_files, locations, patterns, org)


def _record_locations(document: Document, prefix: str, locations: dict[str, str]) -> None:
    for path, line in document.lines.items():
        key = "/".join([prefix, *map(str, path)]) if prefix else "/".join(map(str, path))
        locations[key.strip("/") or prefix] = f"{document.file}:{line}"


def _check_tenant(tenant: Tenant, document: Document, clusters: dict[str, Cluster],
                  patterns: dict[str, PatternFacts], clusters_loaded: bool) -> list[Problem]:
    problems = []
    for i, alias in enumerate(tenant.clusters):
        if clusters_loaded and alias not in clusters:
            message = f"clusters[{i}]: unknown cluster '{alias}' (clusters.yaml defines: {', '.join(sorted(clusters))})"
            problems.append(Problem(document.file, document.line(("clusters", i)), message))
    seen_pairs: dict[tuple[str, str], int] = {}
    for i, flow in enumerate(tenant.flows):
        for end in ("source", "target"):
            alias = getattr(flow, end)
            if clusters_loaded and alias not in clusters:
                known = ", ".join(sorted(clusters))
                message = f"flows[{i}].{end}: unknown cluster '{alias}' (clusters.yaml defines: {known})"
                problems.append(Problem(document.file, document.line(("flows", i, end)), message))
        if flow.source == flow.target:
            problems.append(Problem(document.file, document.line(("flows", i, "target")),
                                    f"flows[{i}]: source and target are both '{flow.source}'"))
        pair = (flow.source, flow.target)
        if pair in seen_pairs:
            problems.append(Problem(document.file, document.line(("flows", i)),
                                    f"flows[{i}]: a second flow {flow.source} -> {flow.target} "
                                    f"(merge it into flows[{seen_pairs[pair]}])"))
        seen_pairs.setdefault(pair, i)
        for kind in ("topics", "groups"):
            for j, regex in enumerate(getattr(flow, kind)):
                if regex in patterns:
                    continue
                try:
                    patterns[regex] = analyse(regex)
                except RegexProblem as exc:
                    problems.append(Problem(document.file, document.line(("flows", i, kind, j)),
                                            f"flows[{i}].{kind}[{j}]: regex '{regex}': {exc}"))
    return problems


def empty_inventory(root: Path) -> Inventory:
    """The base of a plan for a repo that did not exist yet: no clusters, no tenants."""
    return Inventory(Path(root), {}, {}, {}, {}, {}, ())
