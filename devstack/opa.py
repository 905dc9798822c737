"""A real OPA server (`opa run --server`) on loopback, loading a policy directory."""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from devstack import tools
from devstack.files import write_public
from devstack.process import LOOPBACK, ManagedProcess, ensure_port_free, start_on_free_port
from governance.tools import opa_command  # the one way mm2gov runs OPA (an empty environment but GOGC)


@dataclass
class OpaServer:
    """`port` 0: one chosen free at start (again on another if it is taken before OPA binds it)."""

    run_dir: Path
    port: int = 0
    bundle_dirs: list[Path] = field(default_factory=list)
    process: ManagedProcess | None = None
    log_level: str = "info"  # "error" where every request would otherwise be a log line (load tests)

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self, timeout: float = 30) -> None:
        opa = tools.opa()
        if self.port:
            ensure_port_free(self.port, "opa")
        config = self.run_dir / "opa" / "config.yaml"  # also marks the process as this stack's
        write_public(config, b"{}\n")
        self.process, self.port = start_on_free_port(lambda port: ManagedProcess(
            name="opa",
            argv=opa_command(
                opa, "run", "--server", "--addr", f"{LOOPBACK}:{port}",
                "--disable-telemetry", "--config-file", str(config), "--log-level", self.log_level,
                "--log-format", "json",
                *[str(d) for d in self.bundle_dirs],
            ),
            log_path=self.run_dir / "opa" / "opa.log",
            cwd=self.run_dir,
        ), _healthy, timeout, "GET /health", self.port)

    def is_ready(self) -> bool:
        return _healthy(self.port)

    def stop(self) -> None:
        if self.process:
            self.process.stop()


def _healthy(port: int) -> bool:
    with urllib.request.urlopen(f"http://{LOOPBACK}:{port}/health", timeout=2) as response:
        return response.status == 200
