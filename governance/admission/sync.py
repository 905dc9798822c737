"""The governance repo in force at admission: the repo on disk, judged, then pushed to OPA as data.

The repo (clusters.yaml, tenants/*.yaml) is pushed to OPA as `data.mm2gov_repo` (its scopes as
`data.mm2gov_scopes`) at start and again whenever its files change, so a review sends only the
object. A repo that does not load, or that the repo decision (`data.mm2gov.decision`, as
`validate` asks it) finds high or critical violations in, is refused: the last good one stays
in force, and /readyz and /metrics say so (`RepoState`). An OPA that lost its data (restarted)
gets the policies and the last good repo again.

A newer good repo replaces the one in force without a gap: repo and scopes go to OPA in one JSON Patch
(one write transaction), and the tenant index the decider sends with a review changes with them under a
sequence counter (`snapshot`, `unchanged_since`), so a review is judged by the old repo or the new one,
never by a mix of the two, and is not denied meanwhile.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from governance.admission.ownership import TenantIndex
from governance.config import load_inventory
from governance.errors import MM2GovError
from governance.model.tenancy import MalformedDecision, parse_tenancy
from governance.policy.input import build_input
from governance.policy.opa_http import OpaConnection, OpaUnavailable

log = logging.getLogger("mm2gov.admission")
DATA_PATH = "/v1/data"
REPO_DATA_PATH = f"{DATA_PATH}/mm2gov_repo"
JSON_PATCH = "application/json-patch+json"
REPO_DECISION_PATH = "/v1/data/mm2gov/decision"
BLOCKING_SEVERITIES = ("high", "critical")  # a repo with violations of these is never enforced


def repo_signature(root: Path) -> tuple:
    """What a change on disk looks like: names, sizes and mtimes of the repo's YAML files."""
    files = [root / "clusters.yaml", *sorted((root / "tenants").glob("*.y*ml"))]
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files if p.exists())


class _NoDecision(Exception):
    """OPA answered the repo decision without a result (its policies are missing)."""


@dataclass
class RepoState:
    """What /readyz and /metrics say about the governance repo."""

    in_force: bool = False  # a good repo was adopted (pushed to OPA at least once)
    refused: str = ""  # why the newest repo on disk is not the one in force ("" when it is)
    refusals: int = 0  # repos refused since start
    adopted: int = 0  # repos adopted since start
    adopted_at: float = 0.0


class RepoSync:
    """Keeps OPA's copy of the governance repo current; `loaded` is true while OPA holds a good one."""

    def __init__(self, repo: Path, opa: OpaConnection, upload_policies: Callable[[], None] | None = None) -> None:
        self.repo = repo
        self.opa = opa
        self.upload_policies = upload_policies  # put the policy modules back into a restarted OPA
        self.signature: tuple = ()
        self.document: dict[str, Any] | None = None  # the last good repo, as pushed to OPA
        self.scopes: Any = None
        self.index = TenantIndex()  # who owns what in the repo in force in OPA, for tenant resolution
        self._next_index = self.index  # the index of self.document, in force once OPA holds it
        self._stale = False  # self.document is newer than the repo OPA holds
        self._swaps = 0  # even: OPA's repo and self.index agree; odd: they are being replaced
        self.loaded = False  # OPA holds self.document
        self.state = RepoState()
        self._stop = threading.Event()

    def load(self) -> bool:
        """Keep OPA's copy of the repo current: consider the repo on disk when its files change
        (a repo that does not load or has high/critical violations is refused and the last good
        one kept), and push the one in force again when OPA lost it (a restarted OPA)."""
        signature = repo_signature(self.repo)
        if signature != self.signature and not self._consider(signature):
            return False
        if self.document is None:
            return False
        return self._push()

    def _consider(self, signature: tuple) -> bool:
        """Adopt or refuse the repo on disk; False when it could not be judged (OPA down): retried."""
        try:
            inventory = load_inventory(self.repo)
            candidate = build_input(inventory)
        except MM2GovError as exc:
            self.signature = signature
            self._refuse(f"it does not load: {str(exc).splitlines()[0][:300]}")
            return True
        candidate.pop("locations", None)
        try:
            decision = self._repo_decision(candidate)
        except OpaUnavailable as exc:
            log.error("cannot judge the governance repo on disk (%s); checking again", exc)
            return False
        except _NoDecision:
            log.error("OPA gave no repo decision (policies missing?); checking again")
            if self.upload_policies is not None:
                try:
                    self.upload_policies()
                except Exception as exc:  # noqa: BLE001 - tried again at the next check
                    log.error("cannot upload the policies to OPA: %s", type(exc).__name__)
            return False
        self.signature = signature
        violations = decision.get("violations")
        blocking = sorted({str(v.get("rule")) for v in violations if isinstance(v, dict)
                           and v.get("severity") in BLOCKING_SEVERITIES}) if isinstance(violations, list) else ["?"]
        if blocking:
            count = sum(1 for v in violations if isinstance(v, dict) and v.get("severity") in BLOCKING_SEVERITIES) \
                if isinstance(violations, list) else 0
            self._refuse(f"it has {count} high or critical violation(s): {', '.join(blocking[:10])}")
            return True
        try:  # the one strict parser every command uses: a malformed decision is never put in force
            tenancy = parse_tenancy(decision.get("scopes"))
        except MalformedDecision as exc:
            self._refuse(f"its policy decision is malformed ({exc})")
            return True
        self.document, self.scopes, self._stale = candidate, decision.get("scopes"), True
        self._next_index = TenantIndex.of(tenancy, inventory.clusters)
        self.state.refused = ""
        self.state.adopted += 1
        self.state.adopted_at = time.time()
        return True

    def _refuse(self, why: str) -> None:
        self.state.refused = why
        self.state.refusals += 1
        if self.document is None:
            log.error("governance repo %s refused, and no good one was loaded before: every review is denied; "
                      "%s", self.repo, why)
        else:
            log.error("governance repo %s refused, keeping the last good one in force: %s", self.repo, why)

    def _repo_decision(self, document: dict[str, Any]) -> dict[str, Any]:
        answer = self.opa.request("POST", REPO_DECISION_PATH, {"input": {**document, "locations": {}}})
        try:
            result = json.loads(answer.body).get("result") if answer.status == 200 else None
        except (ValueError, AttributeError):
            result = None
        if not isinstance(result, dict) or not isinstance(result.get("violations"), list):
            raise _NoDecision
        return result

    def _push(self) -> bool:
        held = self._opa_holds_repo()
        if self.loaded and held and not self._stale:
            return True
        if self.loaded and held is None:  # OPA does not answer: every review fails on it and says so (denied)
            return False
        restarted = self.loaded and not held  # OPA answers without the repo: it restarted, policies gone too
        if not (self.loaded and held):
            # Reviews are denied (decider: no repo loaded) until policies, repo and scopes are all back: OPA gets
            # the policy modules one at a time, and a review judged by some of them without the repo's data would
            # be allowed by the rules not loaded yet (seen under make test-random: an MM2 moved to another
            # tenant's namespace was admitted while the webhook re-uploaded after an OPA restart).
            self.loaded = self.state.in_force = False
        self._swaps += 1  # odd: reviews under way are judged again (decider)
        try:
            if restarted and self.upload_policies is not None:
                log.warning("OPA lost the governance repo (restarted?): uploading policies and repo again")
                self.upload_policies()
            status = self.opa.request("PATCH", DATA_PATH, self._data_patch(), content_type=JSON_PATCH).status
            if status < 300:
                self.index, self._stale = self._next_index, False
        except MM2GovError as exc:  # OpaUnavailable among them: whether OPA took the patch is unknown
            self.loaded = self.state.in_force = False
            log.error("cannot push the governance repo to OPA: %s", exc)
            return False
        finally:
            self._swaps += 1
        if status >= 300:
            log.error("OPA refused the governance repo: HTTP %d", status)
            return False
        self.loaded = self.state.in_force = True
        log.info("governance repo %s pushed to OPA (%d tenants)", self.repo, len(self.document["tenants"]))
        return True

    def _data_patch(self) -> list[dict[str, Any]]:
        """Repo and scopes (an object: parse_tenancy checked it) as one JSON Patch of OPA's data: one write
        transaction, so OPA never holds new repo data with old scopes."""
        return [{"op": "add", "path": "/mm2gov_repo", "value": self.document},
                {"op": "add", "path": "/mm2gov_scopes", "value": self.scopes}]

    def snapshot(self) -> tuple[int, TenantIndex]:
        """(swap count, tenant index) to judge a review with; `unchanged_since(count)` after OPA's answer says
        whether the repo stayed the same meanwhile."""
        return self._swaps, self.index

    def unchanged_since(self, swaps: int) -> bool:
        return swaps % 2 == 0 and self._swaps == swaps

    def _opa_holds_repo(self) -> bool | None:
        """Whether OPA holds the repo; None when it does not answer."""
        try:
            answer = self.opa.request("GET", REPO_DATA_PATH + "/clusters")
        except OpaUnavailable:
            return None
        return answer.status == 200 and b'"result"' in answer.body

    def _opa_has_repo(self) -> bool:
        return bool(self._opa_holds_repo())

    def problems(self) -> list[str]:
        """Why no good repo is in OPA now, for /readyz ([] when one is)."""
        if self.document is None:
            return ["no good governance repo was ever loaded"
                    + (f" (the repo on disk is refused: {self.state.refused})" if self.state.refused else "")]
        if not (self.loaded and self._opa_has_repo()):
            return ["OPA does not hold the governance repo"]
        return []

    def watch(self, interval: float) -> threading.Thread:
        """Check the repo on disk (and OPA's copy) every `interval` seconds until `stop`."""
        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    self.load()
                except Exception:
                    log.exception("reloading the governance repo failed")

        thread = threading.Thread(target=loop, name="mm2gov-repo-watch", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
