"""The mm2gov wheel as a release builds it, and a local wheelhouse so that installing it needs no index.

Used by the tests that install mm2gov outside the checkout (test_wheel.py: a bare venv;
test_image_install.py: the image's install script into a prefix). The wheelhouse lives in the
mm2gov cache (`$MM2GOV_CACHE/wheelhouse`) and is filled once, pinned to the versions this .venv
runs: the core dependencies with `pip download`, PySpark and py4j with `pip wheel` (PySpark is an
sdist that pip builds; its wheel cache makes that seconds after `make setup`).
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT


def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run argv, failing the test with its output when it exits non-zero."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{' '.join(map(str, argv))}: {done.stdout}{done.stderr}"
    return done


def build_wheel(out: Path) -> Path:
    """The wheel, built the way a release is (sdist, then the wheel from the sdist)."""
    run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO_ROOT)])
    (built,) = out.glob("mm2gov-*.whl")
    return built


def wheelhouse(wheel: Path, scratch: Path, audit: bool = False) -> Path:
    """A directory of wheels that installs `wheel` (with the `audit` extra if asked) without an index."""
    cache = Path(os.environ.get("MM2GOV_CACHE") or Path.home() / ".cache" / "mm2gov")
    house = cache / "wheelhouse"
    house.mkdir(parents=True, exist_ok=True)
    constraints = scratch / "constraints.txt"
    constraints.write_text(run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"]).stdout)
    probe = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-index",
             "--find-links", str(house), "-d", str(scratch / "probe"), "-c", str(constraints), str(wheel)]
    if subprocess.run(probe, capture_output=True, text=True, timeout=300).returncode != 0:
        run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "-d", str(house),
             "-c", str(constraints), str(wheel)])
        for own in house.glob("mm2gov-*"):
            own.unlink()
    if audit:
        pins = [f"{name}=={importlib.metadata.version(name)}" for name in ("pyspark", "py4j")]
        if not all(any(house.glob(f"{pin.split('==')[0]}-{pin.split('==')[1]}-*.whl")) for pin in pins):
            run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps",
                 "-w", str(house), *pins])
    return house
