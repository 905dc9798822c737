"""Where the plan's base comes from: a directory, or the same repo path at a git ref."""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from pathlib import Path

from governance.errors import ConfigError


def materialize_git_base(head_dir: Path, ref: str, into: Path) -> Path | None:
    """Extract `head_dir` as it was at `ref` under `into`; None if it did not exist there."""
    head_dir = head_dir.resolve()
    top = _git(head_dir, "rev-parse", "--show-toplevel").strip()
    if not top:
        raise ConfigError(f"{head_dir} is not inside a git repository; give --base a directory instead")
    relative = head_dir.relative_to(Path(top).resolve()).as_posix()
    _git(Path(top), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}",
         error=f"--base {ref}: not a commit in {top}")
    listing = _git(Path(top), "ls-tree", "-d", "--name-only", ref, "--", relative or ".")
    if relative and not listing.strip():
        return None
    archive = subprocess.run(["git", "-C", top, "archive", "--format=tar", ref, "--", relative or "."],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise ConfigError(f"--base {ref}: git archive failed: {archive.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into / relative if relative else into


def _git(cwd: Path, *args: str, error: str | None = None) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        if error:
            raise ConfigError(error)
        return ""
    return done.stdout


def temporary_dir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="mm2gov-base-")
