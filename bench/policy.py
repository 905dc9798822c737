"""Benchmark: validate and plan on a generated governance repo of 1,000 tenants x 3 flows.

Prints the end-to-end time of `mm2gov validate` and `mm2gov plan` (fresh processes,
OPA started and stopped by mm2gov), the OPA decision time inside them, and the
same decision by `opa eval` on the same bundle and input, with the ratio.
Targets (2 cores): validate and plan under 5 s end to end; mm2gov's decision
within 1.5x of `opa eval`.

Usage: python bench/policy.py [--tenants N] [--flows-per-tenant F]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

from governance.config import load_inventory  # noqa: E402
from governance.devstack import tools  # noqa: E402
from governance.policy.bundle import builtin_modules  # noqa: E402
from governance.policy.input import build_input  # noqa: E402
from governance.policy.opa import OpaEngine  # noqa: E402

CLUSTERS = ["dc1", "dc2", "cloud1", "cloud2"]
PAIRS = [("dc1", "cloud1"), ("dc1", "dc2"), ("dc2", "cloud2"), ("cloud1", "cloud2")]


def write_repo(root: Path, tenants: int, flows: int) -> None:
    (root / "tenants").mkdir(parents=True)
    lines = ["clusters:"]
    for name in CLUSTERS:
        zone = "cloud" if name.startswith("cloud") else "onprem"
        lines += [f"  {name}:", f'    bootstrap_servers: "{name}.example:9093"', f"    zone: {zone}",
                  "    security: {protocol: SASL_SSL, sasl_mechanism: SCRAM-SHA-512}"]
    (root / "clusters.yaml").write_text("\n".join(lines) + "\n")
    for i in range(tenants):
        name = f"t{i:04d}"
        flow_lines = []
        for source, target in PAIRS[:flows]:
            flow_lines += [f"  - source: {source}", f"    target: {target}",
                           f'    topics: ["{name}\\\\.orders.*", "{name}\\\\.events"]',
                           f'    groups: ["{name}-.*"]']
        grant = f"grants:\n  - {{to: t{(i + 1) % tenants:04d}, topics: [\"{name}.public.\"], access: [read]}}\n"
        (root / "tenants" / f"{name}.yaml").write_text(
            f"name: {name}\nowners: [\"{name}@example.com\"]\nclassification: internal\n"
            f"topic_prefixes: [\"{name}.\"]\ngroup_prefixes: [\"{name}-\"]\n"
            f"principals:\n  - {{name: \"User:{name}-app\", access: [read, write]}}\n"
            f"  - {{name: \"User:{name}-reader\", access: [read]}}\n"
            f"flows:\n" + "\n".join(flow_lines) + "\n" + grant)


def timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    began = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO_ROOT)
    return time.perf_counter() - began, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tenants", type=int, default=1000)
    parser.add_argument("--flows-per-tenant", type=int, default=3)
    args = parser.parse_args()
    mm2gov = [sys.executable, "-m", "governance", "--log-level", "debug"]
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-policy-") as tmp:
        head, base = Path(tmp) / "head", Path(tmp) / "base"
        write_repo(head, args.tenants, args.flows_per_tenant)
        write_repo(base, args.tenants - 1, args.flows_per_tenant)  # head adds one tenant

        began = time.perf_counter()
        inventory = load_inventory(head)
        load_s = time.perf_counter() - began
        document = build_input(inventory)
        input_path = Path(tmp) / "input.json"
        input_path.write_text(json.dumps(document))

        with OpaEngine(builtin_modules()) as engine:
            engine.evaluate(document)  # warm-up
            decisions = []
            for _ in range(3):
                began = time.perf_counter()
                decision = engine.evaluate(document)
                decisions.append(time.perf_counter() - began)
        mm2gov_decision = min(decisions)

        opa_runs = []
        data_args = [arg for m in builtin_modules() for arg in ("-d", str(m.path))]
        for _ in range(3):
            seconds, done = timed([str(tools.opa()), "eval", *data_args, "--input", str(input_path),
                                   "--format", "json", "data.mm2gov.decision"])
            if done.returncode != 0:
                raise SystemExit(f"opa eval failed: {done.stderr[-2000:]}")
            evaluated = json.loads(done.stdout)["result"][0]["expressions"][0]["value"]
            if set(evaluated["scopes"]) != set(decision.scopes):  # same answer, or the comparison is void
                raise SystemExit("opa eval and mm2gov disagree on the scopes")
            opa_runs.append(seconds)
        opa_eval = min(opa_runs)

        validate_s, validated = timed([*mm2gov, "validate", str(head), "--format", "json"])
        plan_s, planned = timed([*mm2gov, "plan", str(head), "--base", str(base), "--format", "json"])
        for what, done in (("validate", validated), ("plan", planned)):
            if done.returncode not in (0, 1):
                raise SystemExit(f"{what} failed ({done.returncode}): {done.stderr[-2000:]}")
        gained = json.loads(planned.stdout)["summary"]["permissions_gained"]

    flows = sum(len(t.flows) for t in inventory.tenants.values())
    print(f"repo: {len(inventory.tenants)} tenants, {flows} flows, {len(CLUSTERS)} clusters; "
          f"{len(decision.violations)} violations")
    print(f"load + schema check (in process):        {load_s:6.2f} s")
    print(f"OPA decision via mm2gov (server, best/3): {mm2gov_decision:6.2f} s")
    print(f"opa eval, same bundle + input (best/3):   {opa_eval:6.2f} s")
    print(f"ratio mm2gov decision / opa eval:         {mm2gov_decision / opa_eval:6.2f}  (target < 1.5)")
    print(f"mm2gov validate, end to end:              {validate_s:6.2f} s  (target < 5 s)")
    print(f"mm2gov plan (base dir), end to end:       {plan_s:6.2f} s  (target < 5 s; {gained} permissions gained)")


if __name__ == "__main__":
    main()
