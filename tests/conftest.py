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
