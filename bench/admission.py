"""Benchmark: the admission webhook under load, against the same decision asked of OPA directly.

Starts a real OPA and `mm2gov admission serve examples/acme` (HTTPS, its own process), then
drives both from 16 keep-alive connections on loopback with a realistic KafkaMirrorMaker2
review (the one `mm2gov generate` writes for payments):

- at a fixed rate (default 500 requests/s): p50/p99 latency of the webhook and of OPA's REST
  API (`POST /v1/data/mm2gov/admission/decision`, same input), and the ratio;
- at full speed: requests/s of each.

Targets on 2 cores: webhook p99 under 10 ms at 500 requests/s; webhook under 2x OPA alone.
The load generator runs on the same 2 cores, so the figures include its cost: it is the Go
program bench/loadgen (built into the mm2gov cache on first use), because a Python one used
more CPU than the servers it measured. At a fixed rate it is open loop and measures from each
request's scheduled time, so queueing counts. Before anything is timed, the webhook and OPA
must each answer the body with a real decision (allowed), and every timed answer without
`"allowed":true` counts as an error: a broken setup cannot produce fast figures.

Usage: python bench/admission.py [--rate 500] [--seconds 10] [--connections 16]
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import yaml  # noqa: E402

from governance.admission.review import parse_review, policy_input  # noqa: E402
from governance.devstack.files import write_private  # noqa: E402
from governance.devstack.opa import OpaServer  # noqa: E402
from governance.devstack.process import free_port  # noqa: E402
from governance.devstack.tools import cache_dir  # noqa: E402
from governance.secrets.pki import issue_cert, new_ca  # noqa: E402

ACME = REPO_ROOT / "examples" / "acme"
LOADGEN = Path(__file__).resolve().parent / "loadgen"
EXPECT = '"allowed":true'  # in both answers: the webhook's AdmissionReview and OPA's result (compact JSON)


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
    """`target`'s body on `connections` keep-alive connections, at `rate` requests/s in all or flat out.
    Errors include requests that never left because the server was too far behind (loadgen's unsent)."""
    argv = [str(loadgen), "-url", target["url"], "-body", str(target["body"]), "-expect", EXPECT,
            "-connections", str(connections), "-duration", f"{seconds}s", "-rate", str(rate or 0)]
    if target.get("ca"):
        argv += ["-cacert", str(target["ca"])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds * 3 + 60)
    if done.returncode != 0:
        raise SystemExit(f"loadgen failed: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    result["errors"] += result.pop("unsent")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=500)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mm2gov-bench-admission-"))
    out = tmp / "out"
    subprocess.run([sys.executable, "-m", "governance", "generate", str(ACME), "--out", str(out)], check=True,
                   capture_output=True, cwd=REPO_ROOT)
    mm2 = yaml.safe_load((out / "strimzi" / "kafkamirrormaker2-kafka-cloud-payments-onprem-to-cloud.yaml").read_text())
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
              "request": {"uid": "bench", "kind": {"group": "kafka.strimzi.io", "version": "v1",
                                                   "kind": "KafkaMirrorMaker2"},
                          "operation": "CREATE", "namespace": "kafka-cloud", "name": mm2["metadata"]["name"],
                          "object": mm2, "userInfo": {"username": "system:serviceaccount:ci:deployer"}}}
    body = json.dumps(review).encode()
    opa_body = json.dumps({"input": policy_input(parse_review(body), {})}).encode()
    write_private(tmp / "review.json", body)
    write_private(tmp / "opa.json", opa_body)
    loadgen = loadgen_binary()
    ca = new_ca("bench CA")
    pair = issue_cert(ca, "webhook", server=True, ip_addresses=("127.0.0.1",))
    write_private(tmp / "tls.crt", pair.cert_pem())
    write_private(tmp / "tls.key", pair.key_pem())
    write_private(tmp / "ca.crt", ca.cert_pem())
    opa = OpaServer(tmp, free_port(), log_level="error")
    opa.start()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "governance", "--log-level", "warning", "admission", "serve",
                               str(ACME), "--tls-cert", str(tmp / "tls.crt"), "--tls-key", str(tmp / "tls.key"),
                               "--port", str(port), "--opa-url", opa.url], cwd=REPO_ROOT,
                              stderr=subprocess.DEVNULL)
    context = ssl.create_default_context(cafile=str(tmp / "ca.crt"))

    def webhook() -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)

    def opa_direct() -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", opa.port, timeout=10)

    targets = {"webhook": {"url": f"https://127.0.0.1:{port}/validate", "body": tmp / "review.json",
                           "ca": tmp / "ca.crt"},
               "opa": {"url": f"{opa.url}/v1/data/mm2gov/admission/decision", "body": tmp / "opa.json"}}
    try:
        deadline = time.monotonic() + 60
        while True:  # the webhook is up once it answers; its answer is checked below
            try:
                _once(webhook, "/validate", body)
                break
            except (OSError, http.client.HTTPException):
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the webhook did not start")
            time.sleep(0.3)
        deadline = time.monotonic() + 30
        while not _admits(_once(webhook, "/validate", body)):  # the repo reaches OPA just after the port opens
            if time.monotonic() > deadline:
                raise SystemExit(f"the webhook gave no real decision for the payments review: "
                                 f"{_once(webhook, '/validate', body)[:500]!r}")
            time.sleep(0.3)
        direct = json.loads(_once(opa_direct, "/v1/data/mm2gov/admission/decision", opa_body))
        if direct.get("result") != {"allowed": True, "violations": []}:
            raise SystemExit(f"OPA gave no real decision for the payments review: {direct}")
        drive(loadgen, targets["webhook"], args.connections, 2, None)  # warm-up
        print(f"review: KafkaMirrorMaker2 payments-onprem-to-cloud ({len(body)} bytes), "
              f"{args.connections} keep-alive connections, {args.seconds:.0f} s per run; "
              f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        fixed = {name: drive(loadgen, target, args.connections, args.seconds, args.rate)
                 for name, target in targets.items()}
        for name, result in fixed.items():
            print(f"  at {args.rate:.0f} req/s  {name:<8} p50 {result['p50_ms']:6.2f} ms  "
                  f"p99 {result['p99_ms']:6.2f} ms  ({result['requests']} requests, {result['errors']} errors)")
        flat = {name: drive(loadgen, target, args.connections, args.seconds, None) for name, target in targets.items()}
        for name, result in flat.items():
            print(f"  flat out      {name:<8} {result['rps']:7.0f} req/s  p50 {result['p50_ms']:6.2f} ms  "
                  f"p99 {result['p99_ms']:6.2f} ms  ({result['errors']} errors)")
        p99 = fixed["webhook"]["p99_ms"]
        print(f"target: p99 under 10 ms at {args.rate:.0f} req/s -> {p99:.2f} ms ({'met' if p99 < 10 else 'MISSED'})")
        ratio = fixed["webhook"]["p50_ms"] / fixed["opa"]["p50_ms"]
        ratio99 = p99 / fixed["opa"]["p99_ms"]
        print(f"webhook / OPA alone: p50 {ratio:.2f}x, p99 {ratio99:.2f}x, throughput "
              f"{flat['opa']['rps'] / flat['webhook']['rps']:.2f}x ({'met' if ratio < 2 else 'MISSED'} < 2x on p50)")
    finally:
        server.terminate()
        server.wait(timeout=30)
        opa.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _once(connect, path: str, body: bytes) -> bytes:
    connection = connect()
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        return connection.getresponse().read()
    finally:
        connection.close()


def _admits(answer: bytes) -> bool:
    """A real decision for the bench review: an AdmissionReview for its uid that allows it."""
    try:
        response = json.loads(answer)["response"]
    except (ValueError, KeyError, TypeError):
        return False
    return response.get("uid") == "bench" and response.get("allowed") is True and "status" not in response


if __name__ == "__main__":
    main()
