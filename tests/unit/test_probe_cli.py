"""`mm2gov probe` without clusters: the flows it picks, its output (text and JSON) and its one-line errors
with CONTRACT.md's exit codes (the real-stack runs are tests/integration/test_probe.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from governance.errors import ConfigError
from governance.probe.assess import Slo, assess, misses
from governance.probe.canary import Canary, Received
from governance.probe.live import ProbeFlow, probe_flows
from governance.render import probe as render
from tests.conftest import REPO_ROOT, run_cli
from tests.tools.decided import decided
from tests.tools.scopes import model_flow


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "acme"
    shutil.copytree(REPO_ROOT / "examples" / "acme", root)
    path = root / "tenants" / "payments.yaml"
    tenant = yaml.safe_load(path.read_text())
    tenant["flows"][0]["slo"] = {"latency_p99_ms": 800, "max_duplicated": 2}
    path.write_text(yaml.safe_dump(tenant))
    return root


def test_only_flows_with_an_slo_are_probed(repo):
    _, tenancy = decided(repo)
    flows = probe_flows(tenancy, "payments")
    assert [(f.flow, f.topic, f.remote_topic) for f in flows] == [
        ("payments-onprem-to-cloud", "payments.mm2gov-probe", "onprem.payments.mm2gov-probe")]
    assert flows[0].slo == Slo(latency_p99_ms=800, max_duplicated=2)
    assert probe_flows(tenancy, "payments", ("onprem", "cloud")) == flows
    with pytest.raises(ConfigError, match="flow onprem->onprem-dr of tenant 'payments' has an slo"):
        probe_flows(tenancy, "payments", ("onprem", "onprem-dr"))
    with pytest.raises(ConfigError, match="has no flow cloud->onprem"):
        probe_flows(tenancy, "payments", ("cloud", "onprem"))
    with pytest.raises(ConfigError, match="no tenant 'nobody'"):
        probe_flows(tenancy, "nobody")


def _outcome(received_ms: list[int]) -> render.FlowOutcome:
    probe = {"topic": "payments.mm2gov-probe", "topic_item": "payments\\.mm2gov\\-probe",
             "remote_topic": "onprem.payments.mm2gov-probe"}
    flow = ProbeFlow("payments", model_flow("payments", "onprem", "cloud", slo={"latency_p99_ms": 800}, probe=probe))
    sent = [Canary("r1", 0, seq, 1000) for seq in range(3)]
    received = [Received(0, i, c.encode(), ms) for i, (c, ms) in enumerate(zip(sent, received_ms, strict=False))]
    received.append(Received(0, 99, b"not a canary", 5000))
    result = assess("r1", sent, received)
    return render.FlowOutcome(flow, result, misses(result, flow.slo))


def test_json_carries_every_figure_and_the_verdict():
    document = json.loads(render.as_json("payments", [_outcome([1100, 1200, 1300]), _outcome([1100, 3000])]))
    assert document["schema"] == "mm2gov.probe/v1" and document["ok"] is False
    good, bad = document["flows"]
    assert (good["ok"], good["sent"], good["delivered"], good["lost"], good["foreign"], good["latency_ms"]) == (
        True, 3, 3, 0, 1, {"p50": 200, "p99": 300, "max": 300})
    assert bad["lost_canaries"] == [{"partition": 0, "seq": 2}]
    assert bad["misses"] == ["1 of 3 canaries lost (SLO: at most 0)",
                             "end-to-end latency p99 2000 ms over the SLO's 800 ms"]


def test_text_is_one_line_per_flow_with_its_misses_under_it():
    text = render.text("payments", [_outcome([1100, 1200, 1300]), _outcome([])])
    lines = text.splitlines()
    assert lines[0].startswith("OK  payments onprem -> cloud (flow payments-onprem-to-cloud, run r1): 3/3 canaries "
                               "arrived, latency p50 200 ms, p99 300 ms, max 300 ms; lost 0")
    assert lines[1].startswith("SLO MISSED  ") and "no latency (nothing arrived)" in lines[1]
    assert lines[2:] == ["  - 3 of 3 canaries lost (SLO: at most 0)",
                         "  lost: " + ", ".join(f"payments.mm2gov-probe[0] #{seq}" for seq in range(3))]


def test_errors_are_one_line_with_the_contract_exit_codes(repo, tmp_path):
    missing = run_cli("probe", "payments", "--repo", str(repo), "--secrets-dir", str(tmp_path / "none"))
    assert missing.returncode == 3 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().splitlines()[-1].startswith("error: secret 'scram-onprem-mm2gov-probe-payments'")
    no_slo = run_cli("probe", "marketing", "--repo", str(repo))
    assert no_slo.returncode == 2 and "no flow of tenant 'marketing' has an slo" in no_slo.stderr
    bad_flow = run_cli("probe", "payments", "--repo", str(repo), "--flow", "onprem")
    assert bad_flow.returncode == 2 and "is not SOURCE->TARGET" in bad_flow.stderr
    assert "Traceback" not in no_slo.stderr + bad_flow.stderr


def _secrets(root: Path, ca: str) -> Path:
    for name, key, value in [("scram-onprem-mm2gov-probe-payments", "password", "not-a-real-password-7"),
                             ("scram-cloud-mm2gov-probe-payments", "password", "not-a-real-password-8"),
                             ("onprem-cluster-ca", "ca.crt", ca), ("cloud-cluster-ca", "ca.crt", ca)]:
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / key).write_text(value)
    return root


@pytest.mark.parametrize("ca", ["not a certificate", "pem"])
def test_an_unusable_or_unreachable_cluster_is_exit_3_in_one_line_without_the_password(repo, tmp_path, ca):
    """acme's bootstrap servers are loopback ports nothing listens on here (the stack takes free ports)."""
    from governance.secrets.pki import new_ca

    pem = new_ca("probe-test").cert_pem().decode() if ca == "pem" else ca
    done = run_cli("probe", "payments", "--repo", str(repo), "--secrets-dir", str(_secrets(tmp_path / "s", pem)),
                   "--wait", "1")
    assert done.returncode == 3, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: cluster onprem: ") and "as the probe user" in line
    assert "not-a-real-password" not in done.stdout + done.stderr and done.stdout == ""
