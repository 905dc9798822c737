"""The policy bundle: the built-in library (policies/) plus a repo's organisation rules."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

BUILTIN_DIR = Path(os.environ.get("MM2GOV_POLICIES", Path(__file__).resolve().parents[2] / "policies"))


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
    """Organisation modules of a governance repo, uploaded after the built-ins."""
    return [PolicyModule(p.relative_to(repo_root).as_posix(), p) for p in paths]
