"""The HTML audit report renders in headless Chromium: DOM loaded, no page errors, a screenshot kept.

Needs /usr/bin/chromium (installed by `make setup`, devstack/install/chromium.sh);
the screenshots land in tests/artifacts/ for a reviewer to look at.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from spark_audit.catalog import catalog
from spark_audit.evidence import reach_evidence
from spark_audit.report import AuditRun, history_row, write_reports

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
HOSTILE = "<script>alert(1)</script>"
TENANTS = ["payments", "marketing", "risk", "logistics"]


def _f(check_id: str, tenant: str, cluster: str, rtype: str, name: str, principal: str, message: str,
       **evidence: object) -> dict[str, object]:
    meta = catalog()[check_id]
    return {"check_id": check_id, "severity": meta.severity, "tenant": tenant, "cluster": cluster,
            "resource_type": rtype, "resource_name": name, "principal": principal, "message": message,
            "remediation": meta.remediation, "evidence": evidence}


def realistic_findings() -> list[dict[str, object]]:
    """A dozen-plus findings across four tenants and several checks, as the detectors report them."""
    binding = {"principal": "User:marketing-app", "host": "*", "resource_type": "TOPIC", "resource_name": "pay",
               "pattern_type": "PREFIXED", "operation": "READ", "permission": "ALLOW"}
    return [
        _f("ACL_CROSS_TENANT", "marketing", "cloud", "TOPIC", "onprem.payments.orders", "User:marketing-app",
           "User:marketing-app can READ payments' topic onprem.payments.orders on cloud without a grant",
           **reach_evidence("marketing", "payments"), operations=["READ", "DESCRIBE"], binding=binding),
        _f("ACL_CROSS_TENANT", "marketing", "onprem", "TOPIC", "payments.refunds", "User:marketing-app",
           "User:marketing-app can READ payments' topic payments.refunds on onprem without a grant",
           **reach_evidence("marketing", "payments"), operations=["READ"], binding=binding),
        _f("ACL_CROSS_TENANT", "risk", "cloud", "TOPIC", "onprem.logistics.shipments", "User:risk-scoring",
           "User:risk-scoring can WRITE logistics' topic onprem.logistics.shipments on cloud",
           **reach_evidence("risk", "logistics"), operations=["WRITE", "DESCRIBE"],
           binding={**binding, "principal": "User:risk-scoring", "resource_name": "onprem.",
                    "operation": "WRITE"}),
        _f("ACL_CROSS_TENANT", "logistics", "onprem", "GROUP", "payments-settlement", "User:logistics-app",
           "User:logistics-app can READ payments' consumer group payments-settlement on onprem",
           **reach_evidence("logistics", "payments"), operations=["READ"], note=HOSTILE),
        _f("GROUP_CROSS_TENANT", "marketing", "cloud", "GROUP", "marketing-campaigns", "",
           "group marketing-campaigns has committed offsets on payments' topic onprem.payments.orders",
           **reach_evidence("marketing", "payments"), topic="onprem.payments.orders",
           partitions={"0": 18231, "1": 17990, "2": 18502}, lag=12),
        _f("ACL_PREFIX_OVERLAP", "risk", "onprem", "TOPIC", "pay", "User:risk-reporting",
           "PREFIXED binding 'pay' of risk covers payments' names payments. and payroll.",
           **reach_evidence("risk", "payments"), prefix="pay", covers=["payments.", "payroll."]),
        _f("ACL_WILDCARD", "", "cloud", "TOPIC", "*", "User:*",
           "ALLOW READ for User:* on every topic of cloud", binding={**binding, "principal": "User:*",
                                                                     "resource_name": "*",
                                                                     "pattern_type": "LITERAL"}),
        _f("MM2_PRINCIPAL_OVERREACH", "payments", "cloud", "TOPIC", "onprem.marketing.leads",
           "User:mm2-payments-onprem-cloud",
           "MM2 principal of flow payments-onprem-cloud can WRITE marketing's remote topic onprem.marketing.leads",
           **reach_evidence("payments", "marketing"), flow="payments-onprem-cloud", operations=["WRITE", "CREATE"]),
        _f("INTERNAL_TOPIC_EXPOSED", "marketing", "cloud", "TOPIC", "mm2-offset-syncs.onprem.internal",
           "User:marketing-app", "User:marketing-app can READ MM2 internal topic mm2-offset-syncs.onprem.internal",
           kind="offset-syncs", shared_by_flows=["payments-onprem-cloud", "marketing-onprem-cloud"]),
        _f("RECORD_TENANT_MISMATCH", "logistics", "onprem", "TOPIC", "logistics.events", "",
           "12 of 500 sampled records in logistics.events are marked lob=payments",
           **reach_evidence("logistics", "payments"), header="lob", value="payments", sampled=500, mismatched=12,
           offsets={"0": [1201, 1207, 1311], "3": [88, 91]}),
        _f("ACL_STALE", "", "onprem", "USER", "mm2", "User:mm2",
           "SCRAM user mm2 and 4 ALLOW bindings belong to no tenant or flow", bindings=4,
           mechanism="SCRAM-SHA-512"),
        _f("TOPIC_UNOWNED", "", "onprem", "TOPIC", "tmp-export-2024", "",
           "topic tmp-export-2024 matches no tenant's prefixes", partitions=6, bytes=73400320),
        _f("REPLICATION_GAP", "risk", "cloud", "TOPIC", "onprem.risk.scores", "User:mm2-risk-onprem-to-cloud",
           "cloud topic onprem.risk.scores partition 2: 4 record(s) of onprem topic risk.scores missing, 9 "
           "duplicated in the scanned window; flow risk-onprem-to-cloud: 0.0033% missing, 0.0075% duplicated of "
           "120000 source records", flow_id="risk-onprem-to-cloud", source="onprem", source_topic="risk.scores",
           partition=2, window={"from_ts": 1763779500000, "to_ts": 1763780100000}, missing=4, duplicated=9,
           not_on_source=0, missing_source_offsets=[40001, 40002, 40007, 40100],
           duplicated_target_offsets=[39990, 39991], source_records=40000,
           flow={"source_records": 120000, "missing": 4, "duplicated": 9, "missing_rate": 4 / 120000,
                 "duplicated_rate": 9 / 120000, "partitions": 3}),
        _f("TOPIC_SCOPE_MISMATCH", "logistics", "cloud", "TOPIC", "onprem.logistics-eu.routes", "",
           "topic onprem.logistics-eu.routes is replicated by flow logistics-onprem-cloud outside its topic regex",
           flow="logistics-onprem-cloud", regex="logistics\\.routes.*"),
    ]


def history_rows(n: int, before: str = "2026-11-22T02:45:00Z") -> list[dict[str, object]]:
    """`n` earlier runs, six hours apart, oldest first; every ninth one partial."""
    end = datetime.fromisoformat(before.replace("Z", "+00:00"))
    rows: list[dict[str, object]] = []
    for i in range(n):
        started = end - timedelta(hours=6 * (n - i))
        counts = {"critical": max(0, 4 - i // 8) if i % 11 else 0, "high": 3 + i % 3, "medium": 2 + (i // 3) % 4,
                  "low": i % 2, "info": 1}
        rows.append({"run_id": started.strftime("%Y%m%dT%H%M%SZ"), "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
                     "status": "partial" if i % 9 == 4 else "findings", **counts, "total": sum(counts.values())})
    return rows


def make_run(run_id: str = "20261122T024500Z", **overrides: object) -> AuditRun:
    checks = {cid: dataclasses.asdict(meta) for cid, meta in catalog().items()}
    values: dict[str, object] = {
        "run_id": run_id, "started": "2026-11-22T02:45:00Z", "repo": "examples/governance",
        "clusters": ["onprem", "cloud"], "partial": [], "problems": [], "tenants": TENANTS,
        "findings": realistic_findings(), "checks": checks, "records_scanned": 184_220, "seconds": 73.4,
    }
    values.update(overrides)
    return AuditRun(**values)  # type: ignore[arg-type]


def render(html_path: Path, screenshot: Path) -> tuple[str, str]:
    """(DOM after load, Chromium's stderr of the screenshot run); fails when chromium is missing."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} not found: run `make setup` (installs Debian's chromium package)")
    common = ["--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
              "--hide-scrollbars", "--no-first-run", "--disable-extensions", "--window-size=1400,2400"]
    url = html_path.resolve().as_uri()
    shot = subprocess.run([str(CHROMIUM), *common, f"--screenshot={screenshot}", url],
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0, shot.stderr[-2000:]
    dom = subprocess.run([str(CHROMIUM), *common, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout, shot.stderr + dom.stderr


# The report has no script: any console line of the page (Chromium logs them as `INFO:CONSOLE:<line>]` or
# `CONSOLE(<line>)`), an uncaught error, a CSP violation or a failed load is an error.
PAGE_ERROR = re.compile(r"Uncaught|:CONSOLE[:(]\d+|Refused to|Content.Security.Policy|Failed to load resource|"
                        r"ERR_FILE_NOT_FOUND", re.IGNORECASE)


def page_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if PAGE_ERROR.search(line)]


def test_page_error_detection_catches_a_broken_page(tmp_path: Path) -> None:
    """The check below is only worth something if it sees errors in a page that has them."""
    broken = tmp_path / "broken.html"
    broken.write_text('<!DOCTYPE html><html><body><p id="status">PARTIAL</p>'
                      '<script>console.error("boom"); notDefined();</script></body></html>')
    dom, stderr = render(broken, tmp_path / "broken.png")
    assert 'id="status"' in dom
    errors = "\n".join(page_errors(stderr))
    assert "Uncaught ReferenceError" in errors and "boom" in errors


@pytest.fixture(scope="module")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.mark.parametrize(("name", "overrides", "banner"), [
    ("audit-report-findings", {}, "FINDINGS"),
    ("audit-report-partial", {"partial": ["cloud"],
                              "problems": ["cloud: SASL authentication failed for User:mm2gov-audit (ACLs and "
                                           "consumer groups not collected)", f"cloud: broker said {HOSTILE}"]},
     "PARTIAL SNAPSHOT — not a clean bill of health"),
    ("audit-report-clean", {"findings": [], "run_id": "20261122T030000Z"}, "CLEAN"),
])
def test_report_renders_in_headless_chromium(tmp_path: Path, artifacts: Path, name: str,
                                             overrides: dict[str, object], banner: str) -> None:
    run = make_run(**overrides)
    history = [*history_rows(40), history_row(run)]
    paths = write_reports(run, history, tmp_path / "out", {"json", "html", "sarif"})
    assert set(paths) == {"json", "html", "sarif"} and all(p.is_file() for p in paths.values())
    screenshot = artifacts / f"{name}.png"
    screenshot.unlink(missing_ok=True)

    dom, stderr = render(paths["html"], screenshot)

    assert banner in dom, dom[:2000]
    assert 'id="findings"' in dom and 'class="heat"' in dom and "<svg" in dom
    assert 'id="replication"' in dom
    if run.findings:  # the per-flow rates of the REPLICATION_GAP finding
        assert "risk-onprem-to-cloud" in dom and "0.0033%" in dom and "0.0075%" in dom
    assert HOSTILE not in dom and HOSTILE not in paths["html"].read_text()
    if run.findings:
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in paths["html"].read_text()
    assert page_errors(stderr) == [], "\n".join(page_errors(stderr))
    assert screenshot.is_file() and screenshot.stat().st_size > 10_000, screenshot


def test_report_with_one_run_and_many_tenants_renders(tmp_path: Path, artifacts: Path) -> None:
    tenants = [f"lob-{i:02d}" for i in range(14)]
    findings = [{**f, "tenant": tenants[i % 14],
                 "evidence": {**f["evidence"],  # type: ignore[dict-item]
                              **reach_evidence(tenants[i % 14], tenants[(i * 5 + 3) % 14])}}
                for i, f in enumerate(realistic_findings() * 3)]
    run = make_run(tenants=tenants, findings=findings)
    html_path = write_reports(run, [], tmp_path, {"html"})["html"]
    screenshot = artifacts / "audit-report-many-tenants.png"
    screenshot.unlink(missing_ok=True)
    dom, stderr = render(html_path, screenshot)
    assert "FINDINGS" in dom and page_errors(stderr) == []
    assert screenshot.stat().st_size > 10_000
