"""Benchmark: the admission webhook under load, against the same decisions asked of OPA directly.

Starts a real kube-apiserver (the devstack's, namespaces of examples/acme created in it), a real
OPA and `mm2gov admission serve examples/acme --kubeconfig ...` (HTTPS, its own process, the
namespace watch on), then drives both from 16 keep-alive connections on loopback with varied
reviews, cycled in order: every object mm2gov puts into Kubernetes for examples/acme
(KafkaMirrorMaker2s in the Strimzi and the tenants' namespaces, KafkaUsers, KafkaTopics,
Secrets; admitted) and a hostile mutant of each (another tenant's patterns, foreign bootstrap
servers or Secrets, ACLs outside the tenant, a topic no tenant owns, a wrong Secret type;
denied). Each body has a distinct uid, and every answer must be the expected allow or deny:

- at a fixed rate (default 500 requests/s): p50/p99 latency of the webhook (namespace lookup in
  the watch cache, review parsing, regex facts, OPA, answer) and of OPA's REST API alone
  (`POST /v1/data/mm2gov/admission/decision`, the same inputs), and the ratio. The two
  alternate for --rounds rounds (default 3) and the medians are compared: on a shared 2-core
  machine one run's p99 swings by several times with whatever else runs;
- at full speed: requests/s of each.

Targets on 2 cores: webhook p99 at most 2x OPA alone's at 500 requests/s.
The load generator runs on the same 2 cores, so the figures include its cost: it is the Go
program bench/loadgen (built into the mm2gov cache on first use), because a Python one used
more CPU than the servers it measured. At a fixed rate it is open loop and measures from each
request's scheduled time, so queueing counts. Before anything is timed, the webhook and OPA
must each give every body its expected decision, and every timed answer without it counts as
an error: a broken setup cannot produce fast figures.

Usage: python bench/admission.py [--rate 500] [--seconds 10] [--connections 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import http.client
import json
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

from devstack.files import write_private  # noqa: E402
from devstack.opa import OpaServer  # noqa: E402
from devstack.process import free_port  # noqa: E402
from devstack.stack import Stack, StackSpec  # noqa: E402
from devstack.tools import cache_dir  # noqa: E402
from governance.admission.envelope import parse_review  # noqa: E402
from governance.admission.facts import policy_input  # noqa: E402
from governance.secrets.pki import issue_cert  # noqa: E402
from tests.tools import acme_objects  # noqa: E402

LOADGEN = Path(__file__).resolve().parent / "loadgen"
ALLOW, DENY = '"allowed":true', '"allowed":false'  # in both answers (compact JSON)


def loadgen_binary() -> Path:
    """bench/loadgen built into the mm2gov cache, named by a hash of its source: rebuilt only when it changed."""
    digest = hashlib.sha256()
    for name in ("go.mod", "main.go"):
        digest.update((LOADGEN / name).read_bytes())
    binary = cache_dir() / "bin" / f"mm2gov-loadgen-{digest.hexdigest()[:12]}"
    if binary.is_file():
        return binary
    if shutil.which("go") is None:
        raise SystemExit("bench/admission.py needs Go to build bench/loadgen (install Go 1.22+)")
    binary.parent.mkdir(parents=True, exist_ok=True)
    partial = binary.with_name(binary.name + ".tmp")
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOPROXY": "off", "GOFLAGS": "-mod=mod"}  # stdlib only: no download
    done = subprocess.run(["go", "build", "-trimpath", "-o", str(partial), "."], cwd=LOADGEN, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cannot build bench/loadgen:\n{done.stderr}")
    partial.replace(binary)
    return binary


def drive(loadgen: Path, target: dict, connections: int, seconds: float, rate: float | None) -> dict:
    """`target`'s bodies on `connections` keep-alive connections, at `rate` requests/s in all or flat out.
    Errors include requests that never left because the server was too far behind (loadgen's unsent)."""
    argv = [str(loadgen), "-url", target["url"], "-bodies", str(target["bodies"]),
            "-connections", str(connections), "-duration", f"{seconds}s", "-rate", str(rate or 0)]
    if target.get("ca"):
        argv += ["-cacert", str(target["ca"])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds * 3 + 60)
    if done.returncode != 0:
        raise SystemExit(f"loadgen failed: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    result["errors"] += result.pop("unsent")
    return result


def hostile(obj: dict, document: dict) -> dict:
    """One mutant of an admitted object that must be denied."""
    bad = copy.deepcopy(obj)
    kind = bad["kind"]
    if kind == "KafkaMirrorMaker2":
        variant = len(bad["metadata"]["name"]) % 3
        if variant == 0:
            bad["spec"]["mirrors"][0]["topicsPattern"] += ",marketing\\..*"
        elif variant == 1:
            bad["spec"]["target"]["bootstrapServers"] += ",attacker.example:9093"
        else:
            other = next(s for t in document["tenants"].values() for s in t["names"]["principal_secrets"][0]
                         if s not in json.dumps(obj))
            bad["spec"]["template"] = {"pod": {"volumes": [{"name": "x", "secret": {"secretName": other}}]}}
    elif kind == "KafkaUser":
        bad["spec"]["authorization"]["acls"].append(
            {"resource": {"type": "topic", "name": "nobody.", "patternType": "prefix"}, "operations": ["Read"]})
    elif kind == "KafkaTopic":
        bad["metadata"]["name"] = bad["spec"]["topicName"] = "nobody.topic"
    else:
        bad["type"] = "kubernetes.io/service-account-token"
    return bad


def reviews(repo: Path) -> list[tuple[dict, str]]:
    """(AdmissionReview, expected) for every admitted object and one hostile mutant of each."""
    document = acme_objects.repo_document(repo)
    objects = acme_objects.allowed_objects(repo)
    for obj in [o for o in objects if o["kind"] == "KafkaMirrorMaker2"]:  # in their tenants' namespaces too
        moved = copy.deepcopy(obj)
        moved["metadata"]["namespace"] = obj["metadata"]["labels"]["mm2gov.io/tenant"]
        objects.append(moved)
    found = []
    for i, obj in enumerate(objects):
        found.append((acme_objects.admission_review(obj, f"ok-{i}"), ALLOW))
        found.append((acme_objects.admission_review(hostile(obj, document), f"bad-{i}"), DENY))
    return found


def write_bodies(path: Path, items: list[tuple[bytes, str]]) -> None:
    write_private(path, "".join(json.dumps({"body": base64.b64encode(body).decode(), "expect": expect}) + "\n"
                                for body, expect in items).encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=500)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="fixed-rate runs of each, alternated")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mm2gov-bench-admission-"))
    repo = tmp / "acme"
    shutil.copytree(acme_objects.ACME, repo)
    loadgen = loadgen_binary()
    stack = Stack(StackSpec(run_dir=tmp / "stack", components=("kube",))).up()
    opa = server = None
    try:
        from kubernetes import client

        core = client.CoreV1Api(stack.kube.client())
        namespaces = acme_objects.namespaces(repo)
        for name, labels in namespaces.items():
            core.create_namespace({"metadata": {"name": name, "labels": labels}})
        index = acme_objects.tenant_index(repo)
        items = reviews(repo)
        bodies = [json.dumps(review, separators=(",", ":")).encode() for review, _ in items]
        inputs = []
        for body in bodies:
            request = parse_review(body)
            inputs.append(json.dumps({"input": policy_input(request, namespaces[request["namespace"]], index)},
                                     separators=(",", ":")).encode())
        expected = [expect for _, expect in items]
        write_bodies(tmp / "reviews.jsonl", list(zip(bodies, expected, strict=True)))
        write_bodies(tmp / "inputs.jsonl", list(zip(inputs, expected, strict=True)))
        pair = issue_cert(stack.ca, "webhook", server=True, ip_addresses=("127.0.0.1",))
        write_private(tmp / "tls.crt", pair.cert_pem())
        write_private(tmp / "tls.key", pair.key_pem())
        opa = OpaServer(tmp, log_level="error")
        opa.start()
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "governance", "--log-level", "warning", "admission", "serve", str(repo),
             "--tls-cert", str(tmp / "tls.crt"), "--tls-key", str(tmp / "tls.key"), "--port", str(port),
             "--opa-url", opa.url, "--kubeconfig", str(stack.write_kubeconfig(tmp / "kubeconfig"))],
            cwd=REPO_ROOT, stderr=subprocess.DEVNULL)
        context = ssl.create_default_context(cafile=str(stack.ca_pem_path))

        def webhook() -> http.client.HTTPSConnection:
            return http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)

        def opa_direct() -> http.client.HTTPConnection:
            return http.client.HTTPConnection("127.0.0.1", opa.port, timeout=10)

        deadline = time.monotonic() + 60
        while True:  # ready: a good repo in OPA and the namespace cache filled
            try:
                connection = webhook()
                connection.request("GET", "/readyz")
                if connection.getresponse().status == 200:
                    break
            except (OSError, http.client.HTTPException):
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the webhook did not get ready")
            time.sleep(0.3)
        wrong = []
        for body, opa_body, expect in zip(bodies, inputs, expected, strict=True):
            answer = _once(webhook, "/validate", body)
            direct = _once(opa_direct, "/v1/data/mm2gov/admission/decision", opa_body)
            if expect not in answer.decode() or expect not in direct.decode():
                wrong.append((body[:200], answer[:300], direct[:300]))
        if wrong:
            raise SystemExit(f"{len(wrong)} reviews without their expected decision, e.g. {wrong[0]}")
        targets = {"webhook": {"url": f"https://127.0.0.1:{port}/validate", "bodies": tmp / "reviews.jsonl",
                               "ca": stack.ca_pem_path},
                   "opa": {"url": f"{opa.url}/v1/data/mm2gov/admission/decision", "bodies": tmp / "inputs.jsonl"}}
        drive(loadgen, targets["webhook"], args.connections, 2, None)  # warm-up
        drive(loadgen, targets["opa"], args.connections, 2, None)
        kinds = sorted({json.loads(b)["request"]["kind"]["kind"] for b in bodies})
        print(f"reviews: {len(bodies)} distinct ({expected.count(ALLOW)} admitted, {expected.count(DENY)} denied; "
              f"{', '.join(kinds)}; {sum(map(len, bodies)) // len(bodies)} bytes on average), cycled; "
              f"{args.connections} keep-alive connections, {args.seconds:.0f} s per run; "
              f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        runs: dict[str, list[dict]] = {name: [] for name in targets}
        for _ in range(args.rounds):
            for name, target in targets.items():
                runs[name].append(drive(loadgen, target, args.connections, args.seconds, args.rate))
        fixed = {}
        for name, results in runs.items():
            fixed[name] = {key: statistics.median(r[key] for r in results) for key in ("p50_ms", "p99_ms")}
            errors = sum(r["errors"] for r in results)
            requests = sum(r["requests"] for r in results)
            each = ", ".join(f"{r['p99_ms']:.1f}" for r in results)
            print(f"  at {args.rate:.0f} req/s  {name:<8} p50 {fixed[name]['p50_ms']:6.2f} ms  "
                  f"p99 {fixed[name]['p99_ms']:6.2f} ms  (median of {len(results)} runs: p99 "
                  f"{each} ms; {requests} requests, {errors} errors)")
        flat = {name: drive(loadgen, target, args.connections, args.seconds, None) for name, target in targets.items()}
        for name, result in flat.items():
            print(f"  flat out      {name:<8} {result['rps']:7.0f} req/s  p50 {result['p50_ms']:6.2f} ms  "
                  f"p99 {result['p99_ms']:6.2f} ms  ({result['errors']} errors)")
        ratio50 = fixed["webhook"]["p50_ms"] / fixed["opa"]["p50_ms"]
        ratio99 = fixed["webhook"]["p99_ms"] / fixed["opa"]["p99_ms"]
        print(f"webhook / OPA alone at {args.rate:.0f} req/s: p50 {ratio50:.2f}x, p99 {ratio99:.2f}x "
              f"({'met' if ratio99 <= 2 else 'MISSED'}: p99 at most 2x); throughput "
              f"{flat['opa']['rps'] / flat['webhook']['rps']:.2f}x")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        if opa is not None:
            opa.stop()
        stack.down()
        shutil.rmtree(tmp, ignore_errors=True)


def _once(connect, path: str, body: bytes) -> bytes:
    connection = connect()
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        return connection.getresponse().read()
    finally:
        connection.close()


if __name__ == "__main__":
    main()
