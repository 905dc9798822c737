"""A real OPA server (`opa run --server`) on loopback, loading a policy directory."""

from __future__ import annotations

import os
import shutil
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from governance.devstack import tools
from governance.devstack.files import write_public
from governance.devstack.process import LOOPBACK, ManagedProcess, ensure_port_free

# OPA's heap is small next to what a decision allocates, so at Go's default (GOGC=100) it
# collects every few dozen decisions: GOGC=400 served 25-45% more admission decisions per
# second on 2 cores (bench/admission.py) for a few tens of MB more heap. $GOGC still wins.
OPA_GOGC = "400"


def opa_env() -> dict[str, str]:
    """The whole environment of an OPA server process: the GC setting above ($GOGC wins), nothing else.

    OPA needs no variable. Policies can read every one through `opa.runtime().env`, so none of
    mm2gov's (CI tokens, cloud credentials) is passed on, should an organisation rule ever get
    past the sandbox check (governance/policy/bundle.py).
    """
    return {"GOGC": os.environ.get("GOGC", OPA_GOGC)}


def opa_command(opa: Path, *args: str) -> list[str]:
    """`opa ARGS` run with exactly opa_env() as its environment.

    Through `env -i`, which clears the environment and execs OPA (same pid, so ManagedProcess
    starts, waits for and stops OPA itself).
    """
    env = shutil.which("env") or "/usr/bin/env"
    return [env, "-i", *(f"{name}={value}" for name, value in sorted(opa_env().items())), str(opa), *args]


@dataclass
class OpaServer:
    run_dir: Path
    port: int
    bundle_dirs: list[Path] = field(default_factory=list)
    process: ManagedProcess | None = None
    log_level: str = "info"  # "error" where every request would otherwise be a log line (load tests)

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self, timeout: float = 30) -> None:
        opa = tools.opa()
        ensure_port_free(self.port, "opa")
        config = self.run_dir / "opa" / "config.yaml"  # also marks the process as this stack's
        write_public(config, b"{}\n")
        self.process = ManagedProcess(
            name="opa",
            argv=opa_command(
                opa, "run", "--server", "--addr", f"{LOOPBACK}:{self.port}",
                "--disable-telemetry", "--config-file", str(config), "--log-level", self.log_level,
                "--log-format", "json",
                *[str(d) for d in self.bundle_dirs],
            ),
            log_path=self.run_dir / "opa" / "opa.log",
            cwd=self.run_dir,
        )
        self.process.start()
        self.process.wait_ready(self.is_ready, timeout, f"GET {self.url}/health")

    def is_ready(self) -> bool:
        with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
            return response.status == 200

    def stop(self) -> None:
        if self.process:
            self.process.stop()
