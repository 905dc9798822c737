"""From loaded governance repos to OPA's decisions.

A `PolicySession` owns one OPA (managed or external) and evaluates repos in
worker threads, so the caller can load the next repo while OPA (another process,
another core) evaluates the previous one. OPA starts in a worker too, so the
first repo loads while OPA starts (`decide_repo`). Repos with the same
organisation rules (a plan's base and head, as a rule) are evaluated at the same
time: OPA evaluates each request on a core of its own. A repo with other rules
waits until every evaluation under the rules in OPA has ended, then swaps them.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from governance.config.loader import Inventory, load_inventory
from governance.policy.bundle import builtin_modules, org_modules
from governance.policy.engine import Decision
from governance.policy.input import build_input, resolve_locations
from governance.policy.opa import OpaEngine

log = logging.getLogger("mm2gov.policy")


class PolicySession:
    def __init__(self, opa_url: str | None = None) -> None:
        self.engine = OpaEngine(builtin_modules(), url=opa_url)
        self._worker = ThreadPoolExecutor(max_workers=2, thread_name_prefix="mm2gov-opa")
        self._started: Future[OpaEngine] | None = None
        # The organisation rules in OPA, as (id, text) of each module (None while they are being swapped), and
        # how many evaluations run under them: rules are swapped only when none does.
        self._rules = threading.Condition()
        self._rules_in_opa: tuple[tuple[str, str], ...] | None = ()
        self._evaluating = 0

    def __enter__(self) -> PolicySession:
        self._started = self._worker.submit(self.engine.__enter__)  # the caller loads its repo meanwhile
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._worker.shutdown(wait=True, cancel_futures=True)
        self.engine.close()

    def submit(self, inventory: Inventory) -> Future[Decision]:
        """Evaluate in the background, under the repo's own organisation rules (swapped in first when
        they are not the ones in OPA)."""
        return self._worker.submit(self._decide, inventory)

    def decide(self, inventory: Inventory) -> Decision:
        return self.submit(inventory).result()

    def _decide(self, inventory: Inventory) -> Decision:
        assert self._started is not None, "use PolicySession as a context manager"
        self._started.result()  # raises why OPA could not start
        modules = org_modules(inventory.org_policies, inventory.root)
        rules = tuple((module.id, module.text()) for module in modules)
        document = build_input(inventory)  # while another evaluation may run
        with self._rules:
            self._rules.wait_for(lambda: self._rules_in_opa == rules or self._evaluating == 0)
            if self._rules_in_opa != rules:
                self._rules_in_opa = None  # unknown until the swap has succeeded
                self.engine.use_extra_modules(modules)
                self._rules_in_opa = rules
            self._evaluating += 1
        try:
            began = time.perf_counter()
            decision = self.engine.evaluate(document)
        finally:
            with self._rules:
                self._evaluating -= 1
                self._rules.notify_all()
        log.debug("OPA decision on %d tenants in %.3fs", len(inventory.tenants), time.perf_counter() - began)
        located = Decision(decision.scopes, resolve_locations(decision.violations, inventory.locations))
        located.__dict__["tenancy"] = decision.tenancy  # parse_decision parsed it: the cached value, not again
        return located


def decide(inventory: Inventory, opa_url: str | None = None) -> Decision:
    """Evaluate the built-in library plus the repo's organisation rules on the repo."""
    with PolicySession(opa_url) as session:
        return session.decide(inventory)


def decide_repo(repo: Path, opa_url: str | None = None) -> tuple[Inventory, Decision]:
    """Load REPO (schema check included) while OPA starts, then evaluate it: `decide` after loading, with
    OPA's start (a third of a second) off the critical path."""
    with PolicySession(opa_url) as session:
        inventory = load_inventory(repo)
        return inventory, session.decide(inventory)
