"""The default engine: a real OPA server, driven through opa-python-client.

Without a URL, mm2gov starts `opa run --server` on a free loopback port with
the built-in library loaded from disk, and stops it afterwards. Every other
module (organisation rules; the built-ins too on an external OPA) is uploaded
through the client with `rego_compat=False`, so what runs is exactly what is
in Git; a module OPA rejects is a PolicySyntaxError (exit 2) naming the file.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import requests
from opa_client import OpaClient
from opa_client.errors import RegoParseError

from governance import tools
from governance.errors import RuntimeFailure
from governance.policy.bundle import PolicyModule
from governance.policy.engine import Decision, PolicyError, PolicySyntaxError, parse_decision
from governance.process import LOOPBACK, ManagedProcess, ProcessError, free_port
from governance.tools import opa_command

log = logging.getLogger("mm2gov.policy")
DECISION_PACKAGE, DECISION_RULE = "mm2gov", "decision"


class OpaEngine:
    """Use as a context manager: `with OpaEngine(modules) as engine: engine.evaluate(doc)`."""

    def __init__(self, builtin: list[PolicyModule], url: str | None = None, timeout: float = 60) -> None:
        self.builtin = builtin
        self.url = url
        self.timeout = timeout
        self.extra: list[PolicyModule] = []
        self._process: ManagedProcess | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.client: OpaClient | None = None

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
        port = free_port()
        self._process = ManagedProcess(  # an empty environment but GOGC: nothing for opa.runtime().env to show
            "opa", opa_command(opa, "run", "--server", "--addr", f"{LOOPBACK}:{port}", "--disable-telemetry",
                               "--log-level", "error", *[str(m.path) for m in self.builtin]),
            Path(self._tmp.name) / "opa.log",
        )
        self.url = f"http://{LOOPBACK}:{port}"
        self._process.start()
        try:
            self._process.wait_ready(lambda: requests.get(f"{self.url}/health", timeout=1).ok, 30,
                                     f"GET {self.url}/health")
        except ProcessError as exc:
            raise PolicyError(f"OPA cannot start: {exc}") from None
        log.debug("started OPA at %s", self.url)

    def _connect(self) -> None:
        parsed = urlparse(self.url or "")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise PolicyError(f"invalid OPA URL {self.url!r}: expected http(s)://host:port")
        self.client = OpaClient(host=parsed.hostname, port=parsed.port or (443 if parsed.scheme == "https" else 80),
                                ssl=parsed.scheme == "https", timeout=self.timeout, retries=0)
        try:
            self.client.check_connection()
        except Exception:  # noqa: BLE001 - any failure to reach OPA is the same answer for the user
            raise PolicyError(f"OPA unreachable at {self.url}: cannot evaluate policies, denying") from None

    def upload_builtin(self) -> None:
        """Upload the built-in modules again (an external OPA that restarted has lost them)."""
        self._upload(self.builtin)

    def use_extra_modules(self, modules: list[PolicyModule]) -> None:
        """Replace the organisation modules (a plan's base and head may each have their own)."""
        assert self.client is not None, "use OpaEngine as a context manager"
        for old in self.extra:
            self.client.delete_policy(old.id)
        self.extra = []
        self._upload(modules)
        self.extra = list(modules)

    def _remove_extra(self) -> None:
        """Best effort: an OPA that stopped answering keeps them (a warning says so)."""
        assert self.client is not None
        for module in self.extra:
            try:
                self.client.delete_policy(module.id)
            except Exception as exc:  # noqa: BLE001 - closing: the command's answer is already given
                log.warning("could not remove organisation module %s from %s: %s", module.id, self.url,
                            type(exc).__name__)
        self.extra = []

    def _upload(self, modules: list[PolicyModule]) -> None:
        assert self.client is not None
        for module in modules:
            try:
                self.client.update_policy_from_string(module.text(), module.id, rego_compat=False)
            except RegoParseError as exc:
                raise PolicySyntaxError(_describe_rego_error(module, exc)) from None
            except requests.RequestException as exc:
                raise PolicyError(f"OPA at {self.url} failed while loading {module.id}: "
                                  f"{type(exc).__name__}") from None

    def evaluate(self, document: dict[str, Any]) -> Decision:
        assert self.client is not None, "use OpaEngine as a context manager"
        try:
            response = self.client.query_rule(document, DECISION_PACKAGE, DECISION_RULE)
        except requests.HTTPError as exc:
            raise PolicyError(f"policy evaluation failed: {_opa_message(exc.response)}; denying") from None
        except requests.RequestException as exc:
            raise PolicyError(f"OPA at {self.url} did not answer ({type(exc).__name__}); denying") from None
        return parse_decision(response.get("result"))

    def close(self) -> None:
        if self.client is not None:
            if self._process is None:  # an external OPA outlives this command: the next one must not see our rules
                self._remove_extra()
            self.client.close_connection()
            self.client = None
        if self._process is not None:
            self._process.stop()
            self._process = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _describe_rego_error(module: PolicyModule, exc: RegoParseError) -> str:
    lines = []
    for error in exc.errors or []:
        where = error.get("location") or {}
        row = where.get("row")
        where_text = f"{module.id}:{row}" if row else module.id
        lines.append(f"{where_text}: {error.get('code', 'error')}: {error.get('message')}")
    if not lines:
        lines.append(f"{module.id}: {exc.message}")
    return "policy does not compile (OPA):\n" + "\n".join(f"  {line}" for line in lines)


def _opa_message(response: requests.Response | None) -> str:
    if response is None:
        return "no response"
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}"
    errors = "; ".join(e.get("message", "") for e in body.get("errors", []) if isinstance(e, dict))
    return f"{body.get('code', response.status_code)}: {body.get('message', '')}" + (f" ({errors})" if errors else "")


__all__ = ["OpaEngine", "RuntimeFailure"]
