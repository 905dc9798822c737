"""The webhook's decision on one review: the namespace's labels, the policy input, OPA's answer.

`data.mm2gov.admission.decision` is asked with the object only; the governance repo is already
OPA data (`sync.RepoSync`) and the namespaces are cached (`namespaces`). No good repo loaded, no
namespace source, a cache not yet filled, an unknown namespace, OPA down, a timeout, an
evaluation error or a malformed decision: each is a denial with its reason (fail closed).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from governance.admission.facts import policy_input
from governance.admission.namespaces import NamespaceSource, namespace_source
from governance.admission.sync import RepoSync
from governance.policy.opa_http import OpaConnection, OpaUnavailable

log = logging.getLogger("mm2gov.admission")
DECISION_PATH = "/v1/data/mm2gov/admission/decision"
# A review that overlapped a repo swap (one JSON Patch in OPA: milliseconds) is judged again, this often at most
SWAP_RETRIES = 20
SWAP_PAUSE = 0.05


@dataclass(frozen=True)
class Verdict:
    """The answer to one review: allowed, or denied with the policy's violations or a reason."""

    allowed: bool
    violations: tuple[dict[str, Any], ...] = ()
    reason: str = ""  # why a denial happened without violations (fail closed)


class AdmissionDecider:
    """Decides reviews against the repo `sync` keeps in OPA, with the namespaces of `namespace_labels`
    (a NamespaceSource; None: every review is denied)."""

    def __init__(self, repo: Path, opa_url: str,
                 namespace_labels: NamespaceSource | Callable[[str], dict[str, str]] | None = None,
                 timeout: float = 2.0, upload_policies: Callable[[], None] | None = None) -> None:
        self.opa = OpaConnection(opa_url, timeout)
        self.sync = RepoSync(repo, self.opa, upload_policies)
        self.namespaces = namespace_source(namespace_labels)

    def stop(self) -> None:
        self.sync.stop()
        if self.namespaces is not None and hasattr(self.namespaces, "stop"):
            self.namespaces.stop()

    def readiness(self) -> tuple[bool, str]:
        """(ready, what /readyz says): a good repo in OPA and a filled namespace cache."""
        problems = self.sync.problems()
        if self.namespaces is None:
            problems.append("no namespace source (--kubeconfig or --in-cluster): every review is denied")
        elif not self.namespaces.ready():
            problems.append("the namespace cache is not filled yet")
        if problems:
            return False, "not ready: " + "; ".join(problems) + "\n"
        if self.sync.state.refused:
            return True, (f"ready; the newer governance repo on disk is refused ({self.sync.state.refused}): "
                          "the last good one stays in force\n")
        return True, "ready\n"

    def decide(self, request: dict[str, Any]) -> Verdict:
        """The verdict on one parsed review (`review.parse_review`); every failure is a denial with its reason."""
        if not self.sync.loaded:
            return self._no_repo()
        namespace = request.get("namespace") or ""
        if self.namespaces is None:
            return Verdict(False, reason="mm2gov admission: the webhook has no namespace source, so it cannot "
                                         "tell the tenant; denied (fail closed)")
        if not self.namespaces.ready():
            return Verdict(False, reason="mm2gov admission: the namespace cache is not filled yet; denied "
                                         "(fail closed)")
        labels = self.namespaces.lookup(namespace)
        if labels is None:
            return Verdict(False, reason=f"mm2gov admission: namespace {namespace[:253]!r} is unknown to the "
                                         "API server; denied (fail closed)")
        for _ in range(SWAP_RETRIES):
            if not self.sync.loaded:  # e.g. OPA restarted during the review: its policies are going back in
                return self._no_repo()
            swaps, index = self.sync.snapshot()
            verdict = self._ask_opa(policy_input(request, labels, index))
            if self.sync.unchanged_since(swaps):  # judged by one repo, not by a mix of the old and a newer one
                return verdict
            time.sleep(SWAP_PAUSE)
        return Verdict(False, reason="mm2gov admission: the governance repo kept changing during the review; "
                                     "denied (fail closed)")

    def _no_repo(self) -> Verdict:
        why = f" (the repo on disk is refused: {self.sync.state.refused})" if self.sync.state.refused else ""
        return Verdict(False, reason=f"mm2gov admission: no governance repo is loaded{why}; denied (fail closed)")

    def _ask_opa(self, policy_input_: dict[str, Any]) -> Verdict:
        began = time.perf_counter()
        try:
            answer = self.opa.request("POST", DECISION_PATH, {"input": policy_input_})
        except OpaUnavailable as exc:  # the reason reaches the user: the cause, never OPA's address
            log.debug("%s", exc)  # the sync loop says so once per check; a line per review would flood
            return Verdict(False, reason=f"mm2gov admission: policy engine (OPA) unreachable ({exc.cause}); denied "
                                         "(fail closed)")
        log.debug("OPA answered in %.1f ms", (time.perf_counter() - began) * 1000)
        if answer.status != 200:
            return Verdict(False, reason=f"mm2gov admission: policy evaluation failed (OPA HTTP {answer.status}); "
                                         "denied (fail closed)")
        return parse_verdict(answer.body)


def parse_verdict(body: bytes) -> Verdict:
    """OPA's answer → Verdict; anything but a well-formed decision is a denial."""
    try:
        result = json.loads(body).get("result")
    except (ValueError, AttributeError):
        result = None
    if not isinstance(result, dict) or not isinstance(result.get("allowed"), bool) \
            or not isinstance(result.get("violations"), list):
        return Verdict(False, reason="mm2gov admission: the policy returned no decision (is the admission "
                                     "package loaded?); denied (fail closed)")
    violations = tuple(v for v in result["violations"] if isinstance(v, dict))
    allowed = result["allowed"] and not violations and len(violations) == len(result["violations"])
    if not allowed and not violations:
        return Verdict(False, reason="mm2gov admission: denied without a reason from the policy (fail closed)")
    return Verdict(allowed, violations)
