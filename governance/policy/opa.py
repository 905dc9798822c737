"""The default engine: a real OPA server, driven through its REST API (`opa_http.OpaConnection`).

Without a URL, mm2gov starts `opa run --server` on a free loopback port with
the built-in library loaded from disk, and stops it afterwards. Every other
module (organisation rules; the built-ins too on an external OPA) is uploaded
as it is (`PUT /v1/policies/<id>`), so what runs is exactly what is in Git; a
module OPA rejects is a PolicySyntaxError (exit 2) naming the file.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from governance import tools
from governance.errors import RuntimeFailure
from governance.policy.bundle import PolicyModule
from governance.policy.engine import Decision, PolicyError, PolicySyntaxError, parse_decision
from governance.policy.opa_http import Answer, OpaConnection, OpaUnavailable
from governance.process import LOOPBACK, ManagedProcess, ProcessError, start_on_free_port
from governance.tools import opa_command

log = logging.getLogger("mm2gov.policy")
DECISION_PATH = "/v1/data/mm2gov/decision"


def policy_path(module_id: str) -> str:
    return "/v1/policies/" + quote(module_id, safe="/")


class OpaEngine:
    """Use as a context manager: `with OpaEngine(modules) as engine: engine.evaluate(doc)`."""

    def __init__(self, builtin: list[PolicyModule], url: str | None = None, timeout: float = 60) -> None:
        self.builtin = builtin
        self.url = url
        self.timeout = timeout
        self.extra: list[PolicyModule] = []
        self._process: ManagedProcess | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.client: OpaConnection | None = None

    def __enter__(self) -> OpaEngine:
        try:
            managed = self.url is None
            if managed:
                self._start_server()
            self._connect()
            if not managed:
                self._upload(self.builtin)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _start_server(self) -> None:
        try:
            opa = tools.opa()
        except tools.MissingTool as exc:
            raise PolicyError(f"OPA cannot start: {exc}") from None
        self._tmp = tempfile.TemporaryDirectory(prefix="mm2gov-opa-")
        log_path = Path(self._tmp.name) / "opa.log"
        try:
            self._process, port = start_on_free_port(
                lambda port: ManagedProcess(  # an empty environment but GOGC: nothing for opa.runtime().env to show
                    "opa", opa_command(opa, "run", "--server", "--addr", f"{LOOPBACK}:{port}", "--disable-telemetry",
                                       "--log-level", "error", *[str(m.path) for m in self.builtin]), log_path),
                lambda port: _healthy(f"http://{LOOPBACK}:{port}"), 30, "GET /health")
        except ProcessError as exc:
            raise PolicyError(f"OPA cannot start: {exc}") from None
        self.url = f"http://{LOOPBACK}:{port}"
        log.debug("started OPA at %s", self.url)

    def _connect(self) -> None:
        try:
            self.client = OpaConnection(self.url or "", self.timeout)
        except OpaUnavailable as exc:
            raise PolicyError(str(exc)) from None
        try:
            answer = self.client.request("GET", "/health")
        except OpaUnavailable:
            answer = None
        if answer is None or answer.status != 200:
            raise PolicyError(f"OPA unreachable at {self.url}: cannot evaluate policies, denying")

    def upload_builtin(self) -> None:
        """Upload the built-in modules again (an external OPA that restarted has lost them)."""
        self._upload(self.builtin)

    def use_extra_modules(self, modules: list[PolicyModule]) -> None:
        """Replace the organisation modules (a plan's base and head may each have their own). Each is
        recorded as soon as OPA has it, so one OPA refuses after others were taken is removed with them
        (`close`): an external OPA never keeps part of a repo's rules."""
        assert self.client is not None, "use OpaEngine as a context manager"
        for old in self.extra:
            self._delete(old)
        self.extra = []
        for module in modules:
            self._upload([module])
            self.extra.append(module)

    def _remove_extra(self) -> None:
        """Best effort: an OPA that stopped answering keeps them (a warning says so)."""
        assert self.client is not None
        for module in self.extra:
            try:
                self._delete(module)
            except PolicyError as exc:  # closing: the command's answer is already given
                log.warning("could not remove organisation module %s from %s: %s", module.id, self.url, exc)
        self.extra = []

    def _upload(self, modules: list[PolicyModule]) -> None:
        assert self.client is not None
        for module in modules:
            try:
                answer = self.client.request("PUT", policy_path(module.id), body=module.text().encode(),
                                             content_type="text/plain")
            except OpaUnavailable as exc:
                raise PolicyError(f"OPA at {self.url} failed while loading {module.id}: {exc}") from None
            if answer.status == 400:
                raise PolicySyntaxError(_describe_rego_error(module, answer))
            if answer.status != 200:
                raise PolicyError(f"OPA at {self.url} failed while loading {module.id}: {_opa_message(answer)}")

    def _delete(self, module: PolicyModule) -> None:
        assert self.client is not None
        try:
            answer = self.client.request("DELETE", policy_path(module.id))
        except OpaUnavailable as exc:
            raise PolicyError(str(exc)) from None
        if answer.status not in (200, 404):  # 404: gone already (an OPA that restarted)
            raise PolicyError(f"OPA at {self.url} did not remove {module.id}: {_opa_message(answer)}")

    def evaluate(self, document: dict[str, Any]) -> Decision:
        assert self.client is not None, "use OpaEngine as a context manager"
        try:
            answer = self.client.request("POST", DECISION_PATH, {"input": document})
            if answer.status != 200:
                raise PolicyError(f"policy evaluation failed: {_opa_message(answer)}; denying")
            result = answer.json()
        except OpaUnavailable as exc:
            raise PolicyError(f"OPA at {self.url} did not answer ({exc}); denying") from None
        return parse_decision(result.get("result") if isinstance(result, dict) else None)

    def close(self) -> None:
        if self.client is not None:
            if self._process is None:  # an external OPA outlives this command: the next one must not see our rules
                self._remove_extra()
            self.client.close()
            self.client = None
        if self._process is not None:
            self._process.stop()
            self._process = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _healthy(url: str) -> bool:
    """Whether OPA at `url` answers GET /health with 200 (a probe while it starts)."""
    client = OpaConnection(url, timeout=1)
    try:
        return client.request("GET", "/health").status == 200
    except OpaUnavailable:
        return False
    finally:
        client.close()


def _error_body(answer: Answer) -> dict[str, Any]:
    """OPA's error document ({code, message, errors}), or {} when the body is not one."""
    try:
        body = answer.json()
    except OpaUnavailable:
        return {}
    return body if isinstance(body, dict) else {}


def _describe_rego_error(module: PolicyModule, answer: Answer) -> str:
    body = _error_body(answer)
    lines = []
    for error in body.get("errors") or []:
        if not isinstance(error, dict):
            continue
        where = error.get("location") or {}
        row = where.get("row") if isinstance(where, dict) else None
        where_text = f"{module.id}:{row}" if row else module.id
        lines.append(f"{where_text}: {error.get('code', 'error')}: {error.get('message')}")
    if not lines:
        lines.append(f"{module.id}: {body.get('message') or _opa_message(answer)}")
    return "policy does not compile (OPA):\n" + "\n".join(f"  {line}" for line in lines)


def _opa_message(answer: Answer) -> str:
    body = _error_body(answer)
    if not body:
        return f"HTTP {answer.status}"
    errors = "; ".join(str(e.get("message", "")) for e in body.get("errors") or [] if isinstance(e, dict))
    return f"{body.get('code', answer.status)}: {body.get('message', '')}" + (f" ({errors})" if errors else "")


__all__ = ["OpaEngine", "RuntimeFailure"]
