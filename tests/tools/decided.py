"""A repo's inventory and resolved tenancy, as the commands get them: loaded, decided by OPA, parsed."""

from __future__ import annotations

import functools
from pathlib import Path

from governance.config import load_inventory
from governance.config.loader import Inventory
from governance.model.tenancy import Tenancy
from governance.policy.decide import decide


def decided(repo: Path) -> tuple[Inventory, Tenancy]:
    inventory = load_inventory(repo)
    return inventory, decide(inventory).tenancy


@functools.cache
def decided_example(repo: Path) -> tuple[Inventory, Tenancy]:
    """`decided` for a committed example repo (examples/...), which no test changes: once per process."""
    return decided(repo)
