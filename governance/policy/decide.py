"""One call from a loaded governance repo to OPA's decision."""

from __future__ import annotations

import logging
import time

from governance.config.loader import Inventory
from governance.policy.bundle import builtin_modules, org_modules
from governance.policy.engine import Decision
from governance.policy.input import build_input
from governance.policy.opa import OpaEngine

log = logging.getLogger("mm2gov.policy")


def decide(inventory: Inventory, opa_url: str | None = None) -> Decision:
    """Evaluate the built-in library plus the repo's organisation rules on the repo."""
    modules = builtin_modules() + org_modules(inventory.org_policies, inventory.root)
    with OpaEngine(modules, url=opa_url) as engine:
        began = time.perf_counter()
        decision = engine.evaluate(build_input(inventory))
        log.debug("OPA decision on %d tenants in %.3fs", len(inventory.tenants), time.perf_counter() - began)
        return decision
