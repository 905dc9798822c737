"""Benchmark: issue SCRAM credentials and client certificates for 1,000 principals, EC vs RSA.

Each principal gets what `mm2gov secrets issue` gives it on a cluster with a clients CA: a
SCRAM-SHA-512 password with its JAAS line, and a client certificate with PEM files and a
PKCS12 keystore (its own random password). Written to a directory store (0600 files), in
process, so the figure is the cryptography and the writes, not OPA or process start.
Target (2 cores): under 30 s for 1,000 principals with EC keys.

Usage: python bench/secrets.py [--principals N] [--algorithms ec,rsa2048]
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: this file would shadow the stdlib `secrets`

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from governance.compile.desired import DesiredState  # noqa: E402
from governance.config.schema import Cluster  # noqa: E402
from governance.model.acl import AclBinding  # noqa: E402
from governance.secrets.issue import issue_missing  # noqa: E402
from governance.secrets.store import DirSecretStore  # noqa: E402

CLUSTER = Cluster.model_validate({
    "bootstrap_servers": "bench.example:9093", "zone": "onprem",
    "security": {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "ca_secret": "bench-ca",
                 "client_ca_secret": "bench-clients-ca"}})


def desired(principals: int) -> DesiredState:
    names = [f"User:tenant{i // 4:04d}-app{i % 4}" for i in range(principals)]
    bindings = {AclBinding(name, "TOPIC", f"{name[5:15]}.", "PREFIXED", "READ") for name in names}
    return DesiredState(bindings={"bench": bindings}, flows=[], strimzi=[], monitoring={}, header="",
                        principal_tenants={name: name[5:15] for name in names})


def run(principals: int, algorithm: str) -> tuple[float, int]:
    state = desired(principals)
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-secrets-") as tmp:
        began = time.perf_counter()
        issued = issue_missing(state, {"bench": CLUSTER}, DirSecretStore(Path(tmp)), algorithm)
        return time.perf_counter() - began, len(issued)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--principals", type=int, default=1000)
    parser.add_argument("--algorithms", default="ec,rsa2048")
    args = parser.parse_args()
    print(f"issuing for {args.principals} principals (SCRAM + client certificate + PKCS12 each), 1 cluster")
    results = {}
    for algorithm in args.algorithms.split(","):
        seconds, issued = run(args.principals, algorithm)
        results[algorithm] = seconds
        print(f"  {algorithm:<8} {seconds:7.2f} s  {issued:5d} secrets  "
              f"{seconds / args.principals * 1000:6.2f} ms per principal")
    if "ec" in results:
        verdict = "met" if results["ec"] < 30 else "MISSED"
        print(f"target: EC under 30 s for 1,000 principals -> {results['ec']:.2f} s ({verdict})")
    if "ec" in results and "rsa2048" in results:
        print(f"RSA-2048 / EC: {results['rsa2048'] / results['ec']:.2f}x")


if __name__ == "__main__":
    main()
