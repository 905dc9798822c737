"""The engine interface and the decision records. Evaluation errors deny (fail closed)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

from governance.errors import ConfigError, RuntimeFailure
from governance.model.tenancy import MalformedDecision, Tenancy, parse_tenancy

SEVERITIES = ("info", "low", "medium", "high", "critical")


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)  # unknown: worst


@dataclass(frozen=True, order=True)
class Violation:
    rule: str
    severity: str
    tenant: str
    message: str
    location: str

    @property
    def file(self) -> str:
        return self.location.rsplit(":", 1)[0] if ":" in self.location else self.location

    @property
    def line(self) -> int | None:
        tail = self.location.rsplit(":", 1)[-1]
        return int(tail) if ":" in self.location and tail.isdigit() else None

    def to_record(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Decision:
    scopes: dict[str, Any]  # the decision as OPA returned it (admission hands it back to OPA as data)
    violations: tuple[Violation, ...]

    @cached_property
    def tenancy(self) -> Tenancy:
        """The scopes as the one typed model every command reads (governance/model/tenancy.py); a malformed
        decision is a PolicyError, the deny answer (`parse_decision` asks at once)."""
        try:
            return parse_tenancy(self.scopes)
        except MalformedDecision as exc:
            raise PolicyError(f"policy decision data.mm2gov.decision has a malformed scope: {exc}; denying") \
                from None

    def at_or_above(self, severity: str) -> list[Violation]:
        return at_or_above(self.violations, severity)


def at_or_above(violations: Iterable[Violation], severity: str) -> list[Violation]:
    return [v for v in violations if severity_rank(v.severity) >= severity_rank(severity)]


class PolicyError(RuntimeFailure):
    """OPA could not be reached or could not evaluate: the answer is deny."""


class PolicySyntaxError(ConfigError):
    """A policy file does not compile; the message carries OPA's words and the file."""


def parse_decision(result: Any) -> Decision:
    """Check the decision's shape; anything unexpected is an error (never an allow)."""
    if not isinstance(result, dict) or not isinstance(result.get("scopes"), dict) \
            or not isinstance(result.get("violations"), list):
        raise PolicyError("policy decision data.mm2gov.decision is undefined or malformed; denying")
    violations = []
    for item in result["violations"]:
        try:
            violations.append(Violation(**{k: str(item[k]) for k in
                                           ("rule", "severity", "tenant", "message", "location")}))
        except (KeyError, TypeError):
            raise PolicyError(f"a policy returned a malformed violation {item!r:.200}; denying") from None
    decision = Decision(result["scopes"], tuple(sorted(set(violations))))
    decision.tenancy  # noqa: B018 -- parsed here, so a malformed scope denies before anyone reads it
    return decision
