"""Shared fixtures: the real local stack, started once per test session."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from governance.devstack.stack import Stack, StackSpec

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Two Kafka clusters (source, target), OPA with policies/, etcd + kube-apiserver + Strimzi CRDs."""
    running = Stack(StackSpec(run_dir=tmp_path_factory.mktemp("devstack"))).up()
    try:
        yield running
    finally:
        running.down()


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `mm2gov ARGS` in a fresh interpreter, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "governance", *args],
        capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
    )


PUBLIC_KEYS = {"username", "ca.crt", "user.crt"}  # names and certificates: not secret


def secret_values(store: Path) -> set[str]:
    """Every secret value in a directory store (metadata files, names, certificates and binary stores left out)."""
    return {p.read_text() for p in store.rglob("*")
            if p.is_file() and not p.name.startswith(".") and p.name not in PUBLIC_KEYS and p.suffix != ".p12"}


@pytest.fixture(scope="session")
def java_oracle() -> Iterator[object]:
    """Kafka's own code as the oracle (oracle/, governance/devstack/oracle.py): one JVM for the whole session."""
    from governance.devstack.oracle import JavaOracle

    with JavaOracle() as oracle:
        yield oracle
