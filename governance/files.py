"""Writing files: secrets 0600, the rest 0644, parents created (the secret store and the local stack); the one
YAML dumper every written YAML file goes through."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

# libyaml's emitter (PyYAML's C dumper, several times faster than its pure-Python one, same safe representer)
# when PyYAML was built with it, as the locked wheels are; the pure-Python SafeDumper otherwise
YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def write_private(path: Path, data: bytes) -> None:
    """Create or replace `path` readable by its owner only (never briefly wider)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
    finally:
        os.close(fd)


def write_public(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
