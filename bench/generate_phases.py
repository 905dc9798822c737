"""Where one `mm2gov generate` spends its time: the same steps as the command, each timed (issue 26).

Run in a fresh process by bench/scale.py beside its end-to-end `generate` (or alone), so that importing mm2gov
is measured as a command pays it. The steps are those of `mm2gov generate` (governance/cli/deploy.py):
importing the modules it uses; loading the repo while OPA starts (`decide_repo`); OPA's decision on it;
compiling the desired state; rendering and writing the files (`write_outputs`, forked workers). The
process's garbage collector is set as `mm2gov`'s entry point sets it. Prints one JSON object: the seconds
of each step, and of the steps before rendering (importing, loading, the decision) together.

Usage: python bench/generate_phases.py REPO OUT
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [str(REPO_ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent)]


def main() -> None:
    repo, out = Path(sys.argv[1]), Path(sys.argv[2])
    began = time.perf_counter()
    from governance.cli.root import GC_THRESHOLDS  # the entry point's imports, then the command's
    from governance.compile.desired import compile_desired
    from governance.compile.write import write_outputs
    from governance.config.loader import load_inventory
    from governance.policy.decide import PolicySession
    from governance.secrets.placement import placement

    gc.set_threshold(*GC_THRESHOLDS)  # as governance.cli.root.main
    phases = {"imports": time.perf_counter() - began}

    def lap(name: str, since: float) -> float:
        now = time.perf_counter()
        phases[name] = now - since
        return now

    with PolicySession() as session:
        mark = time.perf_counter()
        inventory = load_inventory(repo)
        mark = lap("load (OPA starting meanwhile)", mark)
        decision = session.decide(inventory)
        mark = lap("policy decision (OPA)", mark)
        before_rendering = mark - began
    mark = lap("stopping OPA", mark)  # as decide_repo does before generate compiles
    if decision.at_or_above("high"):  # generate refuses such a repo; the bench's estates have none
        raise SystemExit(f"{repo}: high or critical violations, generate would refuse it")
    state = compile_desired(inventory, decision)
    mark = lap("compile", mark)
    write_outputs(state, out, placement(state, inventory.clusters).tenant_secrets(state))
    lap("render and write", mark)
    print(json.dumps({"steps": phases, "before_rendering": before_rendering}))


if __name__ == "__main__":
    main()
