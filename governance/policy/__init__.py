"""Policy evaluation: the governance repo as OPA input, one decision back (scopes + violations)."""

from governance.policy.engine import Decision, PolicyError, PolicySyntaxError, Violation
from governance.policy.input import build_input

__all__ = ["Decision", "PolicyError", "PolicySyntaxError", "Violation", "build_input"]
