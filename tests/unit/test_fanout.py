"""Rendering over several cores (governance/compile/fanout.py) gives the files rendering in one process gives."""

from __future__ import annotations

import os
import shutil

import pytest

from governance.compile import fanout
from governance.compile.desired import compile_desired
from governance.compile.write import write_outputs
from governance.config import load_inventory
from governance.policy.decide import decide
from tests.conftest import REPO_ROOT

needs_cores = pytest.mark.skipif(fanout.workers() < 2, reason="one core, or no fork: fan_out renders in process")


@needs_cores
def test_results_come_back_in_order_from_forked_workers(monkeypatch):
    monkeypatch.setattr(fanout, "MIN_ITEMS", 1)
    parent = os.getpid()
    offset = 7  # a closure: inherited by the workers, never pickled
    assert fanout.fan_out(lambda n: (n + offset, os.getpid() != parent), range(500)) == \
        [(n + offset, True) for n in range(500)]


def test_small_inputs_render_in_this_process():
    parent = os.getpid()
    assert fanout.fan_out(lambda n: os.getpid() == parent, range(3)) == [True] * 3


@needs_cores
def test_generate_writes_the_same_bytes_whether_it_fans_out_or_not(tmp_path, monkeypatch):
    repo = tmp_path / "acme"
    shutil.copytree(REPO_ROOT / "examples" / "acme", repo)
    inventory = load_inventory(repo)
    decision = decide(inventory)
    serial = compile_desired(inventory, decision)
    write_outputs(serial, tmp_path / "serial")
    monkeypatch.setattr(fanout, "MIN_ITEMS", 1)
    write_outputs(compile_desired(inventory, decision), tmp_path / "fanned")
    files = sorted(p.relative_to(tmp_path / "serial") for p in (tmp_path / "serial").rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(tmp_path / "fanned")
                                     for p in (tmp_path / "fanned").rglob("*") if p.is_file())
    for relative in files:
        assert (tmp_path / "serial" / relative).read_bytes() == (tmp_path / "fanned" / relative).read_bytes()
