"""Benchmark: the admission webhook under load, against the same decision asked of OPA directly.

Starts a real OPA and `mm2gov admission serve examples/acme` (HTTPS, its own process), then
drives both from 16 keep-alive connections on loopback with a realistic KafkaMirrorMaker2
review (the one `mm2gov generate` writes for payments):

- at a fixed rate (default 500 requests/s): p50/p99 latency of the webhook and of OPA's REST
  API (`POST /v1/data/mm2gov/admission/decision`, same input), and the ratio;
- at full speed: requests/s of each.

Targets on 2 cores: webhook p99 under 10 ms at 500 requests/s; webhook under 2x OPA alone.
The load generator runs on the same 2 cores, so the figures include its cost.

Usage: python bench/admission.py [--rate 500] [--seconds 10] [--connections 16]
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import yaml  # noqa: E402

from governance.admission.review import parse_review, policy_input  # noqa: E402
from governance.devstack.files import write_private  # noqa: E402
from governance.devstack.opa import OpaServer  # noqa: E402
from governance.devstack.process import free_port  # noqa: E402
from governance.secrets.pki import issue_cert, new_ca  # noqa: E402

ACME = REPO_ROOT / "examples" / "acme"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("nan")


def drive(connect, path: str, body: bytes, connections: int, seconds: float, rate: float | None) -> dict:
    """Send `body` on `connections` keep-alive connections; at `rate` requests/s in all, or flat out."""
    latencies: list[list[float]] = [[] for _ in range(connections)]
    errors = [0] * connections
    start = time.perf_counter() + 0.2
    end = start + seconds

    def worker(index: int) -> None:
        connection = connect()
        interval = connections / rate if rate else 0.0
        next_at = start + index * (interval / connections if rate else 0)
        while True:
            now = time.perf_counter()
            if now >= end:
                break
            if rate and now < next_at:
                time.sleep(next_at - now)
            began = time.perf_counter()
            try:
                connection.request("POST", path, body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    errors[index] += 1
            except (OSError, http.client.HTTPException):
                errors[index] += 1
                connection.close()
                connection = connect()
            # latency from the scheduled send time: a late start counts against the server
            latencies[index].append(time.perf_counter() - (next_at if rate else began))
            next_at += interval
        connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    flat = [x for part in latencies for x in part]
    return {"requests": len(flat), "rps": len(flat) / seconds, "p50_ms": percentile(flat, 0.5) * 1000,
            "p99_ms": percentile(flat, 0.99) * 1000, "errors": sum(errors)}


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

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                connection = webhook()
                connection.request("POST", "/validate", body, {"Content-Type": "application/json"})
                answer = json.loads(connection.getresponse().read())["response"]
                if answer["allowed"]:
                    break
            except (OSError, KeyError, ValueError):
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the webhook did not start or did not admit the generated object")
            time.sleep(0.3)
        direct = json.loads(_once(opa_direct, "/v1/data/mm2gov/admission/decision", opa_body))
        assert direct["result"]["allowed"] is True, direct
        drive(webhook, "/validate", body, args.connections, 2, None)  # warm-up
        print(f"review: KafkaMirrorMaker2 payments-onprem-to-cloud ({len(body)} bytes), "
              f"{args.connections} keep-alive connections, {args.seconds:.0f} s per run")
        fixed = {name: drive(connect, path, payload, args.connections, args.seconds, args.rate)
                 for name, connect, path, payload in (("webhook", webhook, "/validate", body),
                                                      ("opa", opa_direct, "/v1/data/mm2gov/admission/decision",
                                                       opa_body))}
        for name, result in fixed.items():
            print(f"  at {args.rate:.0f} req/s  {name:<8} p50 {result['p50_ms']:6.2f} ms  "
                  f"p99 {result['p99_ms']:6.2f} ms  ({result['requests']} requests, {result['errors']} errors)")
        flat = {name: drive(connect, path, payload, args.connections, args.seconds, None)
                for name, connect, path, payload in (("webhook", webhook, "/validate", body),
                                                     ("opa", opa_direct, "/v1/data/mm2gov/admission/decision",
                                                      opa_body))}
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
    connection.request("POST", path, body, {"Content-Type": "application/json"})
    return connection.getresponse().read()


if __name__ == "__main__":
    main()
