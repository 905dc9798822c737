"""The policy bundle: the built-in library (policies/) plus a repo's organisation rules.

Organisation rules (`policies/*.rego` of a governance repo) come from a pull request and run
next to the built-in library, so they are a sandbox (docs/policies.md, "Organisation rules"),
checked with the real OPA before anything is uploaded:

- the package must be `mm2gov.rules.<name>`, `<name>` not a built-in rule family: a module in
  `mm2gov.lib.*`, `mm2gov.scopes`, `mm2gov` or a built-in family would add definitions to
  the library (a second body of a helper function makes a rule vacuous) or change scopes;
- only pure builtins may be used (ALLOWED_BUILTINS): nothing that reads the OPA process
  (`opa.runtime` and its `.env`), the network (`http.send`, `net.lookup_ip_addr`, JSON
  schemas that may fetch a `$ref`), randomness, or key material;
- `opa check --strict` with capabilities that lack every other builtin compiles the module
  with the built-in library, so OPA itself refuses what the walk above might miss.

Any refusal is a PolicySyntaxError (exit 2) naming the file and the line.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from governance import resources, tools
from governance.policy.engine import PolicyError, PolicySyntaxError

BUILTIN_DIR = resources.policies_dir()  # $MM2GOV_POLICIES, else the package's copy of policies/
ORG_PACKAGE_PREFIX = ("mm2gov", "rules")
ORG_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

# Builtins an organisation rule may use: pure functions of their arguments (strings, regexes,
# collections, numbers, encodings, time) plus print/trace, whose output only reaches OPA's
# own log and shows nothing a violation message could not. Every other builtin of the OPA
# in use is refused, including those a newer OPA adds.
ALLOWED_BUILTINS = frozenset({
    "abs", "all", "any", "ceil", "concat", "contains", "count", "endswith", "floor", "format_int",
    "indexof", "indexof_n", "intersection", "lower", "max", "min", "product", "replace", "round", "sort",
    "split", "sprintf", "startswith", "substring", "sum", "to_number", "trim", "trim_left", "trim_prefix",
    "trim_right", "trim_space", "trim_suffix", "type_name", "union", "upper", "walk", "set_diff", "re_match",
    "is_array", "is_boolean", "is_null", "is_number", "is_object", "is_set", "is_string",
    "cast_array", "cast_boolean", "cast_null", "cast_object", "cast_set", "cast_string",
    "json.filter", "json.is_valid", "json.marshal", "json.marshal_with_options", "json.patch", "json.remove",
    "json.unmarshal", "yaml.is_valid", "yaml.marshal", "yaml.unmarshal",
    "uri.is_valid", "uri.parse", "uuid.parse", "crypto.md5", "crypto.sha1", "crypto.sha256",
    "print", "trace", "rego.metadata.chain", "rego.metadata.rule",
    "internal.member_2", "internal.member_3", "internal.print", "internal.template_string",
})
ALLOWED_NAMESPACES = ("array.", "object.", "strings.", "regex.", "glob.", "numbers.", "bits.", "graph.",
                      "semver.", "units.", "time.", "base64.", "base64url.", "hex.", "urlquery.", "net.cidr_")

# Why the notable refusals are refused; any other builtin off the list is "not on the allow-list".
REFUSED_BECAUSE = {
    "opa.runtime": "it exposes the OPA process's environment and configuration (CI secrets)",
    "http.send": "it reaches the network (exfiltration, cloud metadata endpoints)",
    "net.lookup_ip_addr": "DNS queries reach the network and can carry data out",
    "rego.parse_module": "organisation rules do not handle Rego source",
    "json.match_schema": "a JSON schema's $ref may be fetched over the network",
    "json.verify_schema": "a JSON schema's $ref may be fetched over the network",
    "rand.intn": "a decision must not depend on chance",
    "uuid.rfc4122": "a decision must not depend on chance",
    "providers.aws.sign_req": "it signs with credentials; a governance repo holds none",
    "crypto.parse_private_keys": "a governance repo holds no key material",
}
REFUSED_NAMESPACES = {
    "io.jwt.": "the input holds no tokens, and signing or verifying needs keys, which must not be in Git",
    "crypto.hmac.": "it needs a key, which must not be in Git",
    "crypto.x509.": "the input holds no certificates or keys",
}


@dataclass(frozen=True)
class PolicyModule:
    id: str  # OPA policy id; also the file name OPA's errors point at
    path: Path

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")


def builtin_modules(root: Path = BUILTIN_DIR) -> list[PolicyModule]:
    """Built-in modules, library first (others import it), tests excluded."""
    files = [p for p in root.rglob("*.rego") if not p.name.endswith("_test.rego")]
    files.sort(key=lambda p: (p.relative_to(root).parts[:2] != ("mm2gov", "lib"), p.as_posix()))
    return [PolicyModule(f"mm2gov-builtin/{p.relative_to(root).as_posix()}", p) for p in files]


def org_modules(paths: tuple[Path, ...], repo_root: Path) -> list[PolicyModule]:
    """Organisation modules of a governance repo, sandbox-checked, to upload after the built-ins."""
    modules = [PolicyModule(p.relative_to(repo_root).as_posix(), p) for p in paths]
    if modules:
        check_org_modules(modules)
    return modules


def builtin_rule_families(root: Path = BUILTIN_DIR) -> set[str]:
    """The `<name>` of every built-in `package mm2gov.rules.<name>`, read from the library on disk."""
    families = set()
    for path in (root / "mm2gov" / "rules").glob("*.rego"):
        if path.name.endswith("_test.rego"):
            continue
        found = re.search(r"^package\s+([\w.]+)", path.read_text(encoding="utf-8"), re.MULTILINE)
        if found and found.group(1).startswith("mm2gov.rules."):
            families.add(found.group(1).removeprefix("mm2gov.rules."))
    return families


def is_allowed_builtin(name: str) -> bool:
    return name in ALLOWED_BUILTINS or name.startswith(ALLOWED_NAMESPACES)


def refusal_reason(name: str) -> str:
    if name in REFUSED_BECAUSE:
        return REFUSED_BECAUSE[name]
    for prefix, reason in REFUSED_NAMESPACES.items():
        if name.startswith(prefix):
            return reason
    return "it is not on the sandbox's allow-list of pure builtins"


def check_org_modules(modules: list[PolicyModule], root: Path = BUILTIN_DIR) -> None:
    """Refuse organisation modules that leave the sandbox; PolicySyntaxError lists every problem."""
    opa = _opa()
    capabilities = _capabilities(str(opa))
    operators = {b["name"] for b in capabilities["builtins"] if "infix" in b}
    forbidden = {b["name"] for b in capabilities["builtins"]
                 if b["name"] not in operators and not is_allowed_builtin(b["name"])}
    families = builtin_rule_families(root)
    refusals: list[str] = []
    errors: list[str] = []  # OPA's own: syntax, strict mode, undefined functions
    with tempfile.TemporaryDirectory(prefix="mm2gov-sandbox-") as tmp:
        staged = _stage(modules, Path(tmp))
        for path, module in staged.items():
            refused, failed = _module_problems(opa, module, path, forbidden, families)
            refusals += refused
            errors += failed
        if not refusals and not errors:
            errors = _compile_problems(opa, capabilities, forbidden, staged, root, Path(tmp))
    sections = []
    if refusals:
        sections.append("organisation policy refused (policies/*.rego run in a sandbox, see docs/policies.md):\n"
                        + "\n".join(f"  {p}" for p in refusals))
    if errors:
        sections.append("policy does not compile (OPA):\n" + "\n".join(f"  {p}" for p in errors))
    if sections:
        raise PolicySyntaxError("\n".join(sections))


def _opa() -> Path:
    try:
        return tools.opa()
    except tools.MissingTool as exc:
        raise PolicyError(f"cannot check organisation policies: {exc}") from None


@functools.lru_cache(maxsize=4)
def _capabilities(opa: str) -> dict[str, Any]:
    """`opa capabilities --current` of this OPA binary."""
    done = _run([opa, "capabilities", "--current"])
    if done.returncode != 0:
        raise PolicyError(f"`opa capabilities` failed: {done.stderr.strip()[:300]}")
    capabilities: dict[str, Any] = json.loads(done.stdout)
    return capabilities


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, env={}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PolicyError(f"cannot run {argv[0]} {argv[1]}: {exc}") from None


def _stage(modules: list[PolicyModule], folder: Path) -> dict[str, PolicyModule]:
    """The modules copied into `folder` under plain names (0.rego, 1.rego, ...): staged path -> module. OPA's
    loader reads a path argument as `prefix:path` at its first colon, so a repo whose folder name holds a
    colon (or a line break) would be misread; OPA only ever sees these names, messages show module ids."""
    staged = {}
    for index, module in enumerate(modules):
        path = folder / f"{index}.rego"
        try:
            path.write_text(module.text(), encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise PolicySyntaxError(f"policy does not compile (OPA):\n  {module.id}: cannot read: {reason}") from None
        staged[str(path)] = module
    return staged


def _module_problems(opa: Path, module: PolicyModule, staged: str, forbidden: set[str],
                     families: set[str]) -> tuple[list[str], list[str]]:
    """(sandbox refusals, OPA's parse errors) of one module, read from its staged copy."""
    done = _run([str(opa), "parse", "--format", "json", "--json-include", "locations,-comments", staged])
    if done.returncode != 0:
        return [], _opa_errors(done, {staged: module}, forbidden)
    ast = json.loads(done.stdout)
    problems: list[tuple[int, str]] = []
    package = ast.get("package") or {}
    path = [term.get("value") for term in package.get("path", [])][1:]  # after `data`
    name = ".".join(str(p) for p in path)
    row = (package.get("location") or {}).get("row")
    if (len(path) != 3 or tuple(path[:2]) != ORG_PACKAGE_PREFIX or not isinstance(path[2], str)
            or not ORG_NAME.match(path[2])):
        problems.append((row or 0, f"{_where(module, row)}: package {name} is not allowed: organisation rules are in "
                        "a package mm2gov.rules.<name> (lower-case letters, digits and _), which cannot "
                        "change the built-in library, the scopes or the decision"))
    elif path[2] in families:
        problems.append((row or 0, f"{_where(module, row)}: package {name} is a built-in rule family "
                        f"({', '.join(sorted(families))}): an organisation module there would add "
                        "definitions to the built-in rules; choose another <name>"))
    seen = set()
    for builtin, ref_row in _builtin_refs(ast):
        if builtin in forbidden and (builtin, ref_row) not in seen:
            seen.add((builtin, ref_row))
            problems.append((ref_row or 0, f"{_where(module, ref_row)}: {builtin} is not allowed in organisation "
                                           f"rules: {refusal_reason(builtin)}"))
    return [text for _, text in sorted(problems)], []


def _builtin_refs(node: Any) -> Iterator[tuple[str, int | None]]:
    """Every name a ref could call a builtin by (`io.jwt.decode`: io, io.jwt, io.jwt.decode), with its row.

    Walks every ref of the module (calls, operators, `with ... as <function>` replacements),
    iteratively. Local names that happen to shadow a builtin are refused too: rename them.
    """
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, dict):
            value = item.get("value")
            if item.get("type") == "ref" and isinstance(value, list) and value \
                    and isinstance(value[0], dict) and value[0].get("type") == "var":
                parts = [str(value[0].get("value"))]
                for term in value[1:]:
                    if not isinstance(term, dict) or term.get("type") != "string":
                        break
                    parts.append(str(term.get("value")))
                row = (item.get("location") or {}).get("row")
                for end in range(1, len(parts) + 1):
                    yield ".".join(parts[:end]), row
            todo.extend(item.values())


def _compile_problems(opa: Path, capabilities: dict[str, Any], forbidden: set[str],
                      staged: dict[str, PolicyModule], root: Path, folder: Path) -> list[str]:
    """`opa check --strict` of built-ins + org modules (their staged copies), with capabilities that lack the
    forbidden builtins."""
    sandboxed = {**capabilities, "builtins": [b for b in capabilities["builtins"] if b["name"] not in forbidden],
                 "allow_net": []}
    caps = folder / "capabilities.json"
    caps.write_text(json.dumps(sandboxed), encoding="utf-8")
    builtins = folder / "builtin"
    builtins.mkdir()
    by_path = {**staged, **_stage(builtin_modules(root), builtins)}
    done = _run([str(opa), "check", "--strict", "--format", "json", "--max-errors", "-1",
                 "--capabilities", str(caps), *by_path])
    return _opa_errors(done, by_path, forbidden) if done.returncode != 0 else []


def _opa_errors(done: subprocess.CompletedProcess[str], by_path: dict[str, PolicyModule],
                forbidden: set[str]) -> list[str]:
    """OPA's JSON errors (on stderr), each as `file:line: code: message`, as OPA names the file."""
    try:
        errors = json.loads(done.stderr or done.stdout or "{}").get("errors") or []
    except (ValueError, AttributeError):
        errors = []
    if not errors:
        return [f"OPA: {(done.stderr or done.stdout).strip()[:500]}"]
    problems = []
    for error in errors:
        where = error.get("location") or {}
        file, row = where.get("file") or "", where.get("row")
        module = by_path.get(file) or by_path.get(str(Path(file).resolve())) if file else None
        shown = module.id if module else "?"  # never a path OPA was given: those are staged copies
        message = str(error.get("message"))
        undefined = message.removeprefix("undefined function ")
        if undefined != message and undefined in forbidden:
            message += f" (not allowed in organisation rules: {refusal_reason(undefined)})"
        problems.append(f"{shown}:{row}: {error.get('code', 'error')}: {message}" if row
                        else f"{shown}: {error.get('code', 'error')}: {message}")
    return problems


def _where(module: PolicyModule, row: int | None) -> str:
    return f"{module.id}:{row}" if row else module.id
