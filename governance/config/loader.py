"""Load a governance repo: YAML with the line of every node, schema, semantic checks.

Every problem names file, line and key; all problems of a repo are reported
together (`InvalidConfig`, exit 2), never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from governance.config.regex import PatternFacts, RegexProblem, analyse
from governance.config.schema import PATTERN_MEANINGS, CapacityFile, Cluster, ClustersFile, Tenant
from governance.config.yaml_reader import (  # noqa: F401 -- the reader's names, as the loader offers them
    FAST_LOADER,
    MAX_ALIASES,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_NODES,
    PURE_LOADER,
    Document,
    NodePath,
    Problem,
    confined,
    dotted,
    parse_yaml,
    read_bytes,
    read_yaml,
)
from governance.errors import ConfigError
from governance.model import names
from governance.model.capacity import SIZING_SINCE


class InvalidConfig(ConfigError):
    """One or more problems in the governance repo; `str()` lists one per line."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"invalid governance repo ({len(problems)} {noun}):\n"
                         + "\n".join(f"  {p}" for p in problems))


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
    capacity: CapacityFile | None = None  # capacity.yaml, when the platform calibrated (docs/capacity.md)


class ReadCache:
    """Tenant files already parsed and checked, by path in the repo and bytes, and regexes already analysed.
    `plan` loads two versions of a repo that a pull request leaves mostly alike: loading both with one
    cache parses and validates each unchanged tenant file once. A file is reused only under the same path
    with the same bytes, from which alone its document, its tenant and its problems follow."""

    def __init__(self) -> None:
        self._tenants: dict[tuple[str, bytes], tuple[Document | None, Tenant | None, tuple[Problem, ...]]] = {}
        self._patterns: dict[str, PatternFacts] = {}

    def tenant(self, file: str, raw: bytes) -> tuple[Document | None, Tenant | None, tuple[Problem, ...]]:
        """The tenant file `file` holding `raw`: its document, its Tenant (None when invalid), its problems."""
        key = (file, raw)
        if key not in self._tenants:
            problems: list[Problem] = []
            document = parse_yaml(raw, file, problems)
            tenant = validate_model(Tenant, document, problems) if document else None
            self._tenants[key] = (document, tenant, tuple(problems))
        return self._tenants[key]

    def pattern(self, regex: str) -> PatternFacts:
        """analyse(regex), once per regex; raises RegexProblem (not kept) for a regex it refuses."""
        if regex not in self._patterns:
            self._patterns[regex] = analyse(regex)
        return self._patterns[regex]


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


# Keys whose value is bytes per second: a value with a unit (25MB, "25 MB/s", 2.5e7) is answered in those words.
BYTE_RATE_KEYS = ("bytes_per_second", "_byte_rate")


def _describe(error: dict[str, Any], path: NodePath) -> str:
    kind, message = error["type"], error["msg"].removeprefix("Value error, ")
    if kind == "int_type" and path and str(path[-1]).endswith(BYTE_RATE_KEYS):
        return (f"{dotted(path)}: must be a whole number of bytes per second, without a unit "
                "(25000000 for 25 MB/s)")
    if kind == "extra_forbidden":
        return f"{dotted(path)}: unknown key '{path[-1]}'"
    if kind == "missing":
        return f"{dotted(path)}: missing required key '{path[-1]}'"
    if kind == "string_pattern_mismatch" and error["ctx"]["pattern"] in PATTERN_MEANINGS:
        message = f"must be {PATTERN_MEANINGS[error['ctx']['pattern']]}"
    if "[key]" in error["loc"]:
        return f"{dotted(path)}: invalid name '{path[-1]}': {message}"
    return f"{dotted(path)}: {message}" if path else message


def load_inventory(root: Path, cache: ReadCache | None = None) -> Inventory:
    """Load and check `root`; raise InvalidConfig listing every problem. Loads that share `cache` parse an
    unchanged tenant file once."""
    root, cache = Path(root), cache or ReadCache()
    if not root.is_dir():
        raise ConfigError(f"{root}: not a directory (expected a governance repo with clusters.yaml and tenants/)")
    problems: list[Problem] = []
    locations: dict[str, str] = {}

    clusters: dict[str, Cluster] = {}
    clusters_path = root / "clusters.yaml"
    if not clusters_path.exists() and not clusters_path.is_symlink():
        problems.append(Problem("clusters.yaml", None, "missing: a governance repo needs clusters.yaml"))
    else:
        document = read_yaml(clusters_path, "clusters.yaml", problems, root)
        parsed = validate_model(ClustersFile, document, problems) if document else None
        if parsed is not None:
            clusters = dict(parsed.clusters)
            _record_locations(document, "", locations)
            problems += _reserved_aliases(clusters, document)

    capacity = _load_capacity(root, clusters, problems, locations)

    tenants: dict[str, Tenant] = {}
    tenant_files: dict[str, str] = {}
    tenant_docs: dict[str, Document] = {}
    for path in sorted([*root.glob("tenants/*.yaml"), *root.glob("tenants/*.yml")]):
        file = path.relative_to(root).as_posix()
        raw = read_bytes(path, file, problems, root)
        if raw is None:
            continue
        document, tenant, read_problems = cache.tenant(file, raw)
        problems += read_problems
        if tenant is None or document is None:
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
        problems += _check_tenant(tenant, tenant_docs[name], clusters, patterns, cache,
                                  clusters_loaded=bool(clusters))
    org = tuple(sorted(p for p in root.glob("policies/*.rego") if not p.name.endswith("_test.rego")))
    problems += [refused for p in org if (refused := confined(root, p, p.relative_to(root).as_posix()))]
    if problems:
        raise InvalidConfig(problems)
    return Inventory(root, clusters, tenants, tenant_files, locations, patterns, org, capacity)


CAPACITY_FILE = "capacity.yaml"


def _load_capacity(root: Path, clusters: dict[str, Cluster], problems: list[Problem],
                   locations: dict[str, str]) -> CapacityFile | None:
    """capacity.yaml when the repo has one (its nodes located under `capacity/...`), its clusters known."""
    path = root / CAPACITY_FILE
    if not path.exists() and not path.is_symlink():
        return None
    document = read_yaml(path, CAPACITY_FILE, problems, root)
    parsed = validate_model(CapacityFile, document, problems) if document else None
    if parsed is None:
        return None
    _record_locations(document, "capacity", locations)
    measured = parsed.calibration.measured_at
    if measured < SIZING_SINCE:
        problems.append(Problem(CAPACITY_FILE, document.line(("calibration", "measured_at")), (
            f"calibration.measured_at: measured {measured.isoformat()}, before this mm2gov's sizing last changed "
            f"({SIZING_SINCE.isoformat()}): its figures were measured for another method; measure again on the "
            "MM2 hardware: python bench/capacity.py --calibrate --write capacity.yaml")))
    for alias in sorted(parsed.clusters):
        if clusters and alias not in clusters:
            problems.append(Problem(CAPACITY_FILE, document.line(("clusters", alias)),
                                    f"clusters.{alias}: unknown cluster '{alias}' (clusters.yaml defines: "
                                    f"{', '.join(sorted(clusters))})"))
    return parsed


def _reserved_aliases(clusters: dict[str, Cluster], document: Document) -> list[Problem]:
    """An alias whose remote prefix covers a reserved topic name (names.alias_conflicts) is refused: remote
    topics `<alias>.*` of that cluster would be mm2gov's, Kafka's or MirrorMaker 2's own topics."""
    problems = []
    for alias in sorted(clusters):
        for entry in names.alias_conflicts(alias):
            kind = "prefix" if entry.prefix else "name"
            problems.append(Problem(document.file, document.line(("clusters", alias)), (
                f"clusters.{alias}: alias '{alias}' is reserved: its remote topics "
                f"'{alias}{names.REMOTE_SEPARATOR}*' would cover the reserved topic {kind} '{entry.text}' "
                f"({entry.why}); choose another alias")))
    return problems


def _record_locations(document: Document, prefix: str, locations: dict[str, str]) -> None:
    for path, line in document.lines.items():
        key = "/".join([prefix, *map(str, path)]) if prefix else "/".join(map(str, path))
        locations[key.strip("/") or prefix] = f"{document.file}:{line}"


def _check_tenant(tenant: Tenant, document: Document, clusters: dict[str, Cluster],
                  patterns: dict[str, PatternFacts], cache: ReadCache, clusters_loaded: bool) -> list[Problem]:
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
        for kind in ("topics", "groups", "exclude_topics", "exclude_groups"):
            for j, regex in enumerate(getattr(flow, kind)):
                if regex in patterns:
                    continue
                try:
                    patterns[regex] = cache.pattern(regex)
                except RegexProblem as exc:
                    problems.append(Problem(document.file, document.line(("flows", i, kind, j)),
                                            f"flows[{i}].{kind}[{j}]: regex '{regex}': {exc}"))
    return problems


def empty_inventory(root: Path) -> Inventory:
    """The base of a plan for a repo that did not exist yet: no clusters, no tenants."""
    return Inventory(Path(root), {}, {}, {}, {}, {}, ())
