"""Benchmark: validate and plan on a generated governance repo of 1,000 tenants x 3 flows.

Prints the end-to-end time of `mm2gov validate` and `mm2gov plan` (fresh processes,
OPA started and stopped by mm2gov), and mm2gov's OPA decision (serialise the input,
ask its managed OPA, parse and check the decision) beside a WARM plain OPA server
(`opa run --server` with the same modules) asked the same query on the same
pre-serialised input: both warm, three different repos alternated, answers compared.
Targets (2 cores): validate and plan under 5 s end to end; mm2gov's decision
within 1.3x of warm OPA.

Usage: python bench/policy.py [--tenants N] [--flows-per-tenant F]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import yaml  # noqa: E402

from devstack import tools  # noqa: E402
from governance.config import load_inventory  # noqa: E402
from governance.files import YAML_DUMPER  # noqa: E402
from governance.policy.bundle import builtin_modules  # noqa: E402
from governance.policy.input import build_input  # noqa: E402
from governance.policy.opa import OpaEngine  # noqa: E402

CLUSTERS = ["dc1", "dc2", "cloud1", "cloud2"]
PAIRS = [("dc1", "cloud1"), ("dc1", "dc2"), ("dc2", "cloud2"), ("cloud1", "cloud2")]


def write_repo(root: Path, tenants: int, flows: int) -> None:
    (root / "tenants").mkdir(parents=True)
    clusters = {name: {"bootstrap_servers": f"{name}.example:9093",
                       "zone": "cloud" if name.startswith("cloud") else "onprem",
                       "security": {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512"}} for name in CLUSTERS}
    (root / "clusters.yaml").write_text(yaml.dump({"clusters": clusters}, Dumper=YAML_DUMPER, sort_keys=False))
    for i in range(tenants):
        name = f"t{i:04d}"
        tenant = {"name": name, "owners": [f"{name}@example.com"], "classification": "internal",
                  "topic_prefixes": [f"{name}."], "group_prefixes": [f"{name}-"],
                  "principals": [{"name": f"User:{name}-app", "access": ["read", "write"]},
                                 {"name": f"User:{name}-reader", "access": ["read"]}],
                  "flows": [{"source": source, "target": target,
                             "topics": [rf"{name}\.orders.*", rf"{name}\.events"], "groups": [f"{name}-.*"]}
                            for source, target in PAIRS[:flows]],
                  "grants": [{"to": f"t{(i + 1) % tenants:04d}", "topics": [f"{name}.public."], "access": ["read"]}]}
        (root / "tenants" / f"{name}.yaml").write_text(yaml.dump(tenant, Dumper=YAML_DUMPER, sort_keys=False))


def _variant(tmp: Path, head: Path, k: int) -> Path:
    """`head` with tenant k renamed and re-prefixed: a different input of the same size."""
    root = tmp / f"variant{k}"
    shutil.copytree(head, root)
    victim = root / "tenants" / f"t{k:04d}.yaml"
    victim.write_text(victim.read_text().replace(f"t{k:04d}", f"v{k:04d}"))
    return root


@contextlib.contextmanager
def _plain_opa(tmp: Path):
    """A plain `opa run --server` with the built-in modules; yields `ask(body) -> decision`."""
    for attempt in range(5):  # a free port can be taken between choosing and binding
        port = _free_port()
        process = subprocess.Popen([str(tools.opa()), "run", "--server", "--addr", f"127.0.0.1:{port}",
                                    "--log-level", "error", *[str(m.path) for m in builtin_modules()]],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env={**os.environ, "GOGC": "400"})  # as mm2gov runs its OPA: like with like
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None:
            try:
                connection.request("GET", "/health")
                connection.getresponse().read()
                break
            except OSError:
                connection.close()
                time.sleep(0.1)
        if process.poll() is None:
            break
        if attempt == 4:
            raise SystemExit("cannot start a plain OPA")

    def ask(body: bytes) -> dict:
        connection.request("POST", "/v1/data/mm2gov/decision", body, {"Content-Type": "application/json"})
        return json.loads(connection.getresponse().read())["result"]

    try:
        yield ask
    finally:
        connection.close()
        process.terminate()
        process.wait(10)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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

        variants = [document] + [build_input(load_inventory(_variant(Path(tmp), head, k))) for k in (1, 2)]
        bodies = [json.dumps({"input": d}).encode() for d in variants]
        mm2gov_runs: list[float] = []
        opa_runs: list[float] = []
        with OpaEngine(builtin_modules()) as engine, _plain_opa(Path(tmp)) as plain:
            for d, body in zip(variants, bodies, strict=True):  # warm both on every input
                engine.evaluate(d)
                plain(body)
            for _ in range(3):
                for d, body in zip(variants, bodies, strict=True):
                    began = time.perf_counter()
                    decision = engine.evaluate(d)
                    mm2gov_runs.append(time.perf_counter() - began)
                    began = time.perf_counter()
                    answer = plain(body)
                    opa_runs.append(time.perf_counter() - began)
                    if set(answer["scopes"]) != set(decision.scopes) or \
                            len(answer["violations"]) != len(decision.violations):
                        raise SystemExit("the plain OPA and mm2gov disagree on the decision")
            decision = engine.evaluate(document)
        mm2gov_decision = statistics.median(mm2gov_runs)
        opa_warm = statistics.median(opa_runs)

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
    print(f"OPA decision via mm2gov (median of 9):    {mm2gov_decision:6.3f} s  (3 repos x 3, warm)")
    print(f"warm plain OPA, same query + input:       {opa_warm:6.3f} s  (median of 9, same repos)")
    print(f"ratio mm2gov decision / warm OPA:         {mm2gov_decision / opa_warm:6.2f}  (target <= 1.3)")
    print(f"mm2gov validate, end to end:              {validate_s:6.2f} s  (target < 5 s)")
    print(f"mm2gov plan (base dir), end to end:       {plan_s:6.2f} s  (target < 5 s; {gained} permissions gained)")


if __name__ == "__main__":
    main()
