"""Benchmark: generate for 1,000 tenants; apply ~10,000 ACL bindings to the real local broker.

1. `mm2gov generate` end to end (fresh process, OPA started by mm2gov) on 1,000
   tenants x 3 flows, plus the in-process compile + write time (target < 3 s).
2. On the local stack (two real Kafka 4 clusters, SASL_SSL, StandardAuthorizer):
   apply a repo whose desired state is ~10,000 ACL bindings (both clusters), print
   bindings/s, then the no-op re-apply and its ratio to the first apply (target < 10%).
   Apply times are the reconcile phase in process (snapshot + changes), after OPA.

Usage: python bench/compile_apply.py [--tenants N] [--apply-tenants M]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

from bench.policy import write_repo  # noqa: E402
from devstack.repo import write_stack_repo  # noqa: E402
from devstack.stack import Stack, StackSpec  # noqa: E402
from governance.compile.desired import compile_desired  # noqa: E402
from governance.compile.write import write_outputs  # noqa: E402
from governance.config import load_inventory  # noqa: E402
from governance.kafka.apply import apply_state  # noqa: E402
from governance.policy.decide import decide  # noqa: E402
from governance.secrets.store import DirSecretStore  # noqa: E402


def bench_generate(tmp: Path, tenants: int) -> None:
    repo, out = tmp / "gen-repo", tmp / "gen-out"
    write_repo(repo, tenants, 3)
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "governance", "--log-level", "warning", "generate", str(repo),
                           "--out", str(out)], capture_output=True, text=True, cwd=REPO_ROOT)
    end_to_end = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"generate failed: {done.stderr[-2000:]}")
    inventory = load_inventory(repo)
    decision = decide(inventory)
    began = time.perf_counter()
    state = compile_desired(inventory, decision)
    files = write_outputs(state, tmp / "gen-out-2")
    compile_write = time.perf_counter() - began
    bindings = sum(len(b) for b in state.bindings.values())
    print(f"generate, {tenants} tenants x 3 flows: {len(files)} files, {bindings} ACL bindings")
    print(f"  mm2gov generate end to end:        {end_to_end:6.2f} s  (target < 3 s)")
    print(f"  compile + write (in process):      {compile_write:6.2f} s")


def bench_apply(tmp: Path, tenants: int) -> None:
    print("starting the local stack (Kafka only)...", flush=True)
    stack = Stack(StackSpec(run_dir=tmp / "stack", components=("kafka",))).up()
    try:
        repo, secrets = tmp / "apply-repo", tmp / "secrets"
        write_stack_repo(stack, repo, [f"t{i:04d}" for i in range(tenants)])
        stack.export_secret_store(secrets)
        inventory = load_inventory(repo)
        state = compile_desired(inventory, decide(inventory), str(secrets))
        bindings = sum(len(b) for b in state.bindings.values())
        users = sum(len(u) for u in state.scram_users().values())
        store = DirSecretStore(secrets)
        began = time.perf_counter()
        first = apply_state(state, inventory.clusters, store)
        first_s = time.perf_counter() - began
        began = time.perf_counter()
        again = apply_state(state, inventory.clusters, store)
        again_s = time.perf_counter() - began
        created = sum(len(c.create_acls) for c in first)
        acl_s = max(c.seconds.get("acls", 0.0) for c in first)  # clusters run in parallel
        users_s = max(c.seconds.get("users", 0.0) for c in first)
        print(f"apply, {tenants} tenants: {bindings} ACL bindings, {users} SCRAM users on 2 real brokers")
        print(f"  first apply:    {first_s:6.2f} s in all, {created / first_s:8.0f} bindings/s overall")
        print(f"    ACL creation: {acl_s:6.2f} s, {created / acl_s:8.0f} bindings/s "
              "(batches of 1000, clusters in parallel)")
        print(f"    SCRAM users:  {users_s:6.2f} s for {users} users (SCRAM-SHA-512, 8192 iterations each)")
        print(f"  no-op re-apply: {again_s:6.2f} s, {sum(c.count for c in again)} changes, "
              f"{100 * again_s / first_s:5.1f}% of the first apply (target < 10%)")
    finally:
        stack.down()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tenants", type=int, default=1000)
    parser.add_argument("--apply-tenants", type=int, default=385, help="385 tenants = ~10,000 bindings")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-apply-") as tmp:
        bench_generate(Path(tmp), args.tenants)
        bench_apply(Path(tmp), args.apply_tenants)


if __name__ == "__main__":
    main()
