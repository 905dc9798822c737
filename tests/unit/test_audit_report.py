"""The audit's reports (spark_audit.report): pure functions, no Spark. The HTML page is rendered
from Jinja2 templates (spark_audit/report/templates/) with autoescape on."""

from __future__ import annotations

import dataclasses
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from spark_audit.catalog import catalog
from spark_audit.evidence import REACH, REACH_UNKNOWN, reach_evidence, reach_of
from spark_audit.report import (
    AuditRun,
    access_matrix,
    history_row,
    html_page,
    html_report,
    json_document,
    replication_summary,
    sarif_document,
    summary,
    trend,
    write_reports,
)

HOSTILE = "<script>alert(1)</script>"
CHECKS = {cid: dataclasses.asdict(meta) for cid, meta in catalog().items()}


def finding(check_id: str, tenant: str, severity: str | None = None, *, cluster: str = "cloud",
            resource_type: str = "TOPIC", resource_name: str = "t", principal: str = "", **evidence: Any) -> dict:
    return {"check_id": check_id, "severity": severity or CHECKS[check_id]["severity"], "tenant": tenant,
            "cluster": cluster, "resource_type": resource_type, "resource_name": resource_name,
            "principal": principal, "message": f"{check_id} on {resource_name}", "remediation": "fix it",
            "evidence": evidence}


def make_run(findings: list[dict] | None = None, **overrides: Any) -> AuditRun:
    values: dict[str, Any] = {"run_id": "20261122T024500Z", "started": "2026-11-22T02:45:00Z", "repo": "gov",
                              "clusters": ["onprem", "cloud"], "tenants": ["payments", "marketing", "risk"],
                              "findings": findings if findings is not None else sample_findings(),
                              "checks": CHECKS, "records_scanned": 1200, "seconds": 12.5}
    values.update(overrides)
    return AuditRun(**values)


def sample_findings() -> list[dict]:
    return [
        finding("ACL_CROSS_TENANT", "marketing", resource_name="payments.orders", principal="User:marketing-app",
                owner="payments", operations=["READ"], **reach_evidence("marketing", "payments")),
        finding("GROUP_CROSS_TENANT", "marketing", resource_type="GROUP", resource_name="marketing-x",
                topic_owner="payments", topic="payments.orders", **reach_evidence("marketing", "payments")),
        finding("ACL_CROSS_TENANT", "risk", resource_name="marketing.leads", principal="User:risk-app",
                owner="marketing", **reach_evidence("risk", "marketing")),
        finding("ACL_STALE", "", cluster="onprem", resource_type="USER", resource_name="mm2", principal="User:mm2"),
        finding("TOPIC_UNOWNED", "", cluster="onprem", resource_name="tmp", note=HOSTILE),
    ]


# --- summary / status ----------------------------------------------------------------------------

def test_summary_counts_per_severity_tenant_and_check() -> None:
    s = summary(make_run())
    assert s["status"] == "findings" and s["clean"] is False
    assert s["total"] == 5 and s["highest"] == "critical"
    assert list(s["by_severity"]) == ["critical", "high", "medium", "low", "info"]
    assert s["by_severity"] == {"critical": 3, "high": 0, "medium": 1, "low": 1, "info": 0}
    assert s["by_tenant"]["marketing"]["critical"] == 2 and s["by_tenant"]["risk"]["critical"] == 1
    assert s["by_tenant"]["payments"] == dict.fromkeys(s["by_severity"], 0)  # declared tenants are listed
    assert s["by_tenant"][""] == {"critical": 0, "high": 0, "medium": 1, "low": 1, "info": 0}
    assert s["by_check"]["ACL_CROSS_TENANT"] == 2 and s["by_check"]["ACL_WILDCARD"] == 0
    assert set(s["by_check"]) == set(CHECKS)


def test_no_findings_on_a_complete_snapshot_is_clean() -> None:
    s = summary(make_run([]))
    assert s["status"] == "clean" and s["clean"] is True and s["total"] == 0 and s["highest"] is None


def test_info_findings_alone_are_still_clean() -> None:
    s = summary(make_run([finding("TOPIC_UNOWNED", "", severity="info")]))
    assert s["status"] == "clean" and s["clean"] is True and s["total"] == 1


@pytest.mark.parametrize("overrides", [
    {"partial": ["cloud"]},
    {"partial": ["onprem:acls"], "problems": ["onprem: describeAcls: not authorized"]},
    {"problems": ["cloud: timed out listing consumer groups"]},  # a problem alone is enough (fail safe)
])
@pytest.mark.parametrize("findings", [[], None])
def test_a_partial_snapshot_is_never_clean(overrides: dict, findings: list | None) -> None:
    run = make_run(findings, **overrides)
    s = summary(run)
    assert s["status"] == "partial" and s["clean"] is False
    assert history_row(run)["status"] == "partial"


def test_unknown_severity_ranks_worst_and_is_counted() -> None:
    s = summary(make_run([finding("ACL_STALE", "", severity="severe")]))
    assert next(iter(s["by_severity"])) == "severe" and s["by_severity"]["severe"] == 1
    assert s["status"] == "findings" and s["highest"] == "severe"


def test_evidence_as_json_string_from_spark_is_parsed() -> None:
    evidence = reach_evidence("risk", "payments")
    raw = {**finding("ACL_CROSS_TENANT", "risk"), "evidence": json.dumps(evidence)}
    assert json_document(make_run([raw]))["findings"][0]["evidence"] == evidence
    assert access_matrix(make_run([raw]))["counts"]["risk"]["payments"] == 1


# --- access matrix -----------------------------------------------------------------------------------

def test_access_matrix_counts_the_accessor_row_and_the_owner_column() -> None:
    m = access_matrix(make_run())
    assert m["tenants"] == ["marketing", "payments", "risk"]
    assert m["counts"]["marketing"]["payments"] == 2  # marketing reaches payments: row marketing, column payments
    assert m["counts"]["risk"]["marketing"] == 1
    assert m["counts"]["payments"]["marketing"] == 0 and m["counts"]["marketing"]["marketing"] == 0
    assert m["checks"]["marketing"]["payments"] == {"ACL_CROSS_TENANT": 1, "GROUP_CROSS_TENANT": 1}
    assert m["total"] == 3 and m["max"] == 2 and m["findings"] == 3 and m["unattributed"] == {}
    assert all(set(row) == set(m["tenants"]) for row in m["counts"].values())  # full square


def test_access_matrix_reads_the_contract_not_the_finding_tenant() -> None:
    """The row is the evidence's accessor_tenant even when the finding's `tenant` is the owner
    (`User:*` findings belong to the tenant whose data is open)."""
    findings = [finding("ACL_CROSS_TENANT", "payments", principal="User:*", **reach_evidence("*", "payments")),
                finding("ACL_PREFIX_OVERLAP", "hr", **reach_evidence("hr", "risk", "payments")),
                finding("RECORD_TENANT_MISMATCH", "payments", **reach_evidence("payments", "marketing")),
                finding("INTERNAL_TOPIC_EXPOSED", "", **reach_evidence("", "payments"))]
    m = access_matrix(make_run(findings))
    assert m["tenants"] == ["hr", "marketing", "payments", "risk", "*", ""]  # then every principal, then nobody
    nonzero = {(a, b): n for a, row in m["counts"].items() for b, n in row.items() if n}
    assert nonzero == {("*", "payments"): 1, ("hr", "risk"): 1, ("hr", "payments"): 1,
                       ("payments", "marketing"): 1, ("", "payments"): 1}
    assert m["findings"] == 4 and m["total"] == 5  # a finding reaching two tenants counts in both cells


def test_a_finding_without_an_owner_is_not_in_the_matrix() -> None:
    findings = [finding("ACL_STALE", "", acl_bindings=2),  # a check that states no reach
                finding("TOPIC_UNOWNED", "payments", partitions=3),
                finding("ACL_WILDCARD", "risk", **reach_evidence("risk", unknown="every topic of cloud")),
                finding("MM2_PRINCIPAL_OVERREACH", "risk", resource_type="CLUSTER", resource_name="kafka-cluster",
                        **reach_evidence("risk", unknown="cluster-level DESCRIBE on cloud")),
                finding("ACL_CROSS_TENANT", "risk", owner_tenant="payments"),  # not the contract's key
                finding("GROUP_CROSS_TENANT", "risk", **{REACH: [{"accessor_tenant": "risk", "owner_tenant": ""},
                                                                 {"accessor_tenant": "risk", "owner_tenant": "risk"},
                                                                 "payments", None]})]  # malformed pairs
    m = access_matrix(make_run(findings))
    assert m["total"] == 0 and m["findings"] == 0 and m["max"] == 0
    assert not any(n for row in m["counts"].values() for n in row.values())
    assert m["unattributed"] == {"ACL_WILDCARD": 1, "MM2_PRINCIPAL_OVERREACH": 1}
    assert m["tenants"] == ["marketing", "payments", "risk"]
    page = html_report(make_run(findings), [])
    matrix = page[page.index('id="access"'):page.index('id="trend"')]
    assert "No finding shows one tenant reaching another" in matrix
    assert "ACL_WILDCARD 1, MM2_PRINCIPAL_OVERREACH 1" in matrix


def test_reach_of_is_the_contract_the_report_reads() -> None:
    evidence = reach_evidence("marketing", "risk", "payments", "marketing", unknown="also every group")
    assert evidence == {REACH: [{"accessor_tenant": "marketing", "owner_tenant": "payments"},
                                {"accessor_tenant": "marketing", "owner_tenant": "risk"}],
                        REACH_UNKNOWN: "also every group"}
    assert reach_of(evidence) == [("marketing", "payments"), ("marketing", "risk")]
    assert reach_of({}) == [] and reach_of({REACH: "payments"}) == []
    assert reach_of({REACH: [{"owner_tenant": "payments"}]}) == [("", "payments")]  # null accessor: undeclared


def test_html_matrix_shows_the_cells() -> None:
    findings = [finding("ACL_CROSS_TENANT", "marketing", **reach_evidence("marketing", "payments")),
                finding("ACL_CROSS_TENANT", "payments", principal="User:*", **reach_evidence("*", "payments"))]
    page = html_report(make_run(findings), [])
    matrix = page[page.index('id="access"'):page.index('id="trend"')]
    assert 'title="marketing → payments: 1 finding (ACL_CROSS_TENANT 1)"' in matrix
    assert "every principal (User:*) → payments: 1 finding" in matrix
    assert matrix.count('<th scope="row">') == 4  # marketing, payments, risk and User:*; no empty (no tenant) row
    assert "No finding shows" not in matrix and "2 findings of cross-tenant reach" in matrix
    assert page.count('<span class="chip">marketing → payments</span>') == 1  # the finding's evidence


# --- JSON -------------------------------------------------------------------------------------------------

def test_json_document_shape_and_order() -> None:
    doc = json.loads(json.dumps(json_document(make_run())))  # serialisable
    assert set(doc) >= {"run", "summary", "findings"}
    assert doc["run"]["run_id"] == "20261122T024500Z" and doc["run"]["clusters"] == ["onprem", "cloud"]
    assert doc["run"]["partial"] == [] and doc["run"]["records_scanned"] == 1200
    keys = {"check_id", "severity", "tenant", "cluster", "resource_type", "resource_name", "principal", "message",
            "remediation", "evidence"}
    assert all(set(f) == keys and isinstance(f["evidence"], dict) for f in doc["findings"])
    order = [(f["severity"], f["check_id"], f["tenant"]) for f in doc["findings"]]
    assert order == [("critical", "ACL_CROSS_TENANT", "marketing"), ("critical", "ACL_CROSS_TENANT", "risk"),
                     ("critical", "GROUP_CROSS_TENANT", "marketing"), ("medium", "ACL_STALE", ""),
                     ("low", "TOPIC_UNOWNED", "")]
    assert doc["summary"]["status"] == "findings"


def gap(flow: str, tenant: str, partition: int, missing: int, duplicated: int, flow_totals: dict) -> dict:
    """A REPLICATION_GAP finding as the detector writes it: its partition's counts and its flow's totals."""
    severity = "medium" if missing else "low"
    return finding("REPLICATION_GAP", tenant, severity, resource_name=f"onprem.{tenant}.orders", flow_id=flow,
                   partition=partition, missing=missing, duplicated=duplicated, flow=flow_totals)


PAY = {"source_records": 120000, "missing": 3, "duplicated": 12, "missing_rate": 3 / 120000,
       "duplicated_rate": 12 / 120000, "partitions": 3}
MKT = {"source_records": 4000, "missing": 0, "duplicated": 40, "missing_rate": 0.0, "duplicated_rate": 0.01,
       "partitions": 2}


def replication_run() -> AuditRun:
    return make_run([gap("pay-onprem-to-cloud", "payments", 0, 3, 0, PAY),
                     gap("pay-onprem-to-cloud", "payments", 1, 0, 12, PAY),
                     gap("mkt-onprem-to-cloud", "marketing", 0, 0, 40, MKT),
                     *sample_findings()])


def test_replication_summary_is_one_row_per_flow_worst_first() -> None:
    rows = replication_summary(replication_run())
    assert [r["flow_id"] for r in rows] == ["pay-onprem-to-cloud", "mkt-onprem-to-cloud"]  # missing first
    pay, mkt = rows
    assert pay == {"flow_id": "pay-onprem-to-cloud", "tenant": "payments", "target": "cloud", **PAY,
                   "partitions_with_gap": 2, "severity": "medium"}
    assert mkt["severity"] == "low" and mkt["duplicated_rate"] == 0.01 and mkt["partitions_with_gap"] == 1
    assert replication_summary(make_run()) == []  # no REPLICATION_GAP finding: no row


def test_replication_rates_in_json_sarif_and_html() -> None:
    run = replication_run()
    assert json_document(run)["replication"] == replication_summary(run)
    assert json_document(make_run())["replication"] == []
    assert sarif_document(run)["runs"][0]["properties"]["replication"] == replication_summary(run)
    page = html_report(run, [])
    table = page[page.index('id="replication"'):page.index('id="checks"')]
    assert "pay-onprem-to-cloud" in table and "120,000" in table
    assert "0.0025%" in table and "0.0100%" in table and "1.0000%" in table  # 3 and 12 of 120,000; 40 of 4,000
    assert "2 of 3" in table
    empty = html_report(make_run(), [])
    assert "No flow has records missing or duplicated" in empty[empty.index('id="replication"'):]
    hostile = html_report(make_run([gap(HOSTILE, HOSTILE, 0, 1, 0, PAY)]), [])  # names from the repo: escaped
    assert HOSTILE not in hostile and "&lt;script&gt;" in hostile[hostile.index('id="replication"'):]


def test_missing_finding_fields_become_empty_strings() -> None:
    doc = json_document(make_run([{"check_id": "ACL_STALE", "severity": "medium", "tenant": None}]))
    f = doc["findings"][0]
    assert f["tenant"] == "" and f["principal"] == "" and f["evidence"] == {}


# --- SARIF ------------------------------------------------------------------------------------------------

def test_sarif_structure_rules_and_results() -> None:
    doc = json.loads(json.dumps(sarif_document(make_run())))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids == sorted(CHECKS) and len(set(ids)) == len(ids)
    for rule in rules:
        entry = CHECKS[rule["id"]]
        assert rule["shortDescription"]["text"] == entry["title"]
        assert rule["fullDescription"]["text"] == entry["rationale"]
        assert rule["help"]["text"] == entry["remediation"]
        expected = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
        assert rule["defaultConfiguration"]["level"] == expected[entry["severity"]]
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", rule["name"])
    results = run["results"]
    assert len(results) == 5
    assert {r["ruleId"] for r in results} <= set(ids)
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"} and result["message"]["text"]
        (location,) = result["locations"]
        (logical,) = location["logicalLocations"]
        assert logical["fullyQualifiedName"].count("/") >= 2
        assert set(result["properties"]) >= {"tenant", "principal", "evidence"}
    first = results[0]
    assert first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "cloud/TOPIC/payments.orders"
    assert reach_of(first["properties"]["evidence"]) == [("marketing", "payments")] and first["level"] == "error"
    assert run["invocations"][0]["executionSuccessful"] is True
    assert "toolExecutionNotifications" not in run["invocations"][0]


def test_sarif_partial_run_is_unsuccessful_with_a_notification_per_problem() -> None:
    problems = ["cloud: SASL authentication failed", "onprem: describeAcls not authorized"]
    doc = sarif_document(make_run([], partial=["cloud", "onprem:acls"], problems=problems))
    invocation = doc["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert [n["message"]["text"] for n in invocation["toolExecutionNotifications"]] == problems
    assert all(n["level"] == "error" for n in invocation["toolExecutionNotifications"])
    assert doc["runs"][0]["properties"]["status"] == "partial"


def test_sarif_partial_without_problem_lines_still_notifies() -> None:
    invocation = sarif_document(make_run([], partial=["cloud"]))["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "cloud" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_check_missing_from_catalog_still_gets_a_rule() -> None:
    doc = sarif_document(make_run([finding("ACL_STALE", "", severity="medium") | {"check_id": "NEW_CHECK"}]))
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    result = doc["runs"][0]["results"][0]
    assert rules[result["ruleIndex"]]["id"] == "NEW_CHECK"


# --- history and trend ---------------------------------------------------------------------------------

def test_history_row_shape() -> None:
    row = history_row(make_run())
    assert row == {"run_id": "20261122T024500Z", "started": "2026-11-22T02:45:00Z", "status": "findings",
                   "critical": 3, "high": 0, "medium": 1, "low": 1, "info": 0, "total": 5}


def test_trend_with_one_run() -> None:
    (point,) = trend([history_row(make_run())])
    assert point["total"] == 5 and point["delta"] is None and point["status"] == "findings"


def test_trend_with_many_runs_orders_dedups_and_computes_deltas() -> None:
    rows = [{"run_id": f"r{i:03d}", "started": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z", "status": "findings",
             "critical": i % 3, "high": 1, "medium": 0, "low": 0, "info": 0, "total": i % 3 + 1} for i in range(100)]
    shuffled = rows[50:] + rows[:50] + [{**rows[99], "status": "partial"}]  # Parquet order, and r099 again
    points = trend(shuffled)
    assert [p["run_id"] for p in points] == [r["run_id"] for r in rows]
    assert points[-1]["status"] == "partial"  # the last row of a run id wins
    assert points[1]["delta"] == points[1]["total"] - points[0]["total"]


def test_trend_tolerates_missing_counts_and_nulls() -> None:
    (point,) = trend([{"run_id": "r1", "started": "2026-01-01", "status": "clean", "critical": None, "high": 2}])
    assert point["critical"] == 0 and point["high"] == 2 and point["total"] == 2


# --- HTML -------------------------------------------------------------------------------------------------------

class _Collector(HTMLParser):
    """Tags, attributes and text of a page, character references resolved (what a browser shows)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> _Collector:
    collector = _Collector()
    collector.feed(page)
    return collector


def test_html_escapes_hostile_values_everywhere() -> None:
    hostile = {**finding("ACL_CROSS_TENANT", HOSTILE, principal=HOSTILE, resource_name=HOSTILE,
                         **reach_evidence(HOSTILE, HOSTILE + "!", unknown=HOSTILE),
                         **{HOSTILE: [HOSTILE], "nested": {"x": HOSTILE}}),
               "message": HOSTILE, "remediation": HOSTILE, "cluster": '"><img src=x onerror=alert(1)>'}
    run = make_run([hostile, *sample_findings()], problems=[HOSTILE], partial=[HOSTILE], repo=HOSTILE,
                   tenants=["payments", HOSTILE])
    page = html_report(run, [{"run_id": HOSTILE, "started": HOSTILE, "status": HOSTILE, "total": 1}])
    assert HOSTILE not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    tags = parse(page).tags
    assert "script" not in tags and "img" not in tags and "iframe" not in tags
    assert not any(name.startswith("on") for name, _ in parse(page).attrs)


# Tenant-controlled strings: markup, quotes of both kinds, a bare ampersand and an entity that must
# stay literal (escaped once, not twice, not zero times).
NASTY = ["<script>alert('t')</script>", 'pay"ments', "o'hara & co", "risk&lt;b&gt;", "</style><iframe src=x>"]
PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "header", "div", "h1", "h2", "h3", "h4", "dl",
             "dt", "dd", "section", "p", "strong", "ul", "li", "nav", "a", "table", "thead", "tbody", "tfoot", "tr",
             "th", "td", "em", "span", "code", "pre", "b", "article", "svg", "defs", "pattern", "rect", "line",
             "text", "g", "footer"}


def test_html_shows_tenant_values_as_text_through_autoescape() -> None:
    """Every place a tenant's value lands (names, topics, principals, messages, evidence keys and
    values, reach pairs, the catalog's descriptions, problems, history) shows it verbatim as text
    or an attribute value, and none of it becomes markup."""
    a, quote, amp, entity, style = NASTY
    check = {"id": "ODD_CHECK", "title": a, "severity": "high", "rationale": quote + amp, "remediation": entity,
             "catches": [style]}
    f = {**finding("ACL_CROSS_TENANT", amp, resource_name=a, principal=quote, cluster=entity,
                   **reach_evidence(quote, amp, unknown=a), **{a: [entity, style], style: {quote: amp}},
                   deep={"x": [{"y": a}]}),
         "check_id": "ODD_CHECK", "message": style, "remediation": quote}
    run = make_run([f, finding("ACL_WILDCARD", a)], checks={**CHECKS, "ODD_CHECK": check}, tenants=NASTY,
                   repo=entity, clusters=[quote, amp], partial=[a], problems=[style])
    history = [{"run_id": a, "started": amp, "status": style, "total": 1, "critical": 1}]
    page = html_report(run, history)
    shown = parse(page)
    visible = "\n".join(shown.text + [v or "" for _, v in shown.attrs])
    for value in NASTY:
        assert value in visible, value  # shown as it is: escaped exactly once
    assert "&amp;lt;b&amp;gt;" in page and "&lt;iframe" in page  # by autoescape, not dropped
    assert set(shown.tags) <= PAGE_TAGS, set(shown.tags) - PAGE_TAGS
    assert "<script" not in page and "<iframe" not in page and page.count("</style>") == 1
    assert not any(name.startswith("on") for name, _ in shown.attrs)


def test_templates_escape_everything_they_print() -> None:
    """Nothing in the templates turns escaping off, and the environment escapes every template."""
    env = html_page.environment()
    assert env.autoescape is True
    templates = Path(html_page.__file__).parent / "templates"
    names = sorted(p.name for p in templates.iterdir())
    assert names == ["macros.html.j2", "report.css", "report.html.j2", "trend.svg.j2"]
    for name in names:
        source = (templates / name).read_text()
        assert not re.search(r"\|\s*safe\b|\{%-?\s*autoescape", source), name
    assert "Markup" not in Path(html_page.__file__).read_text()
    rendered = env.from_string("{{ value }}").render(value='<a href="x">&</a>')
    assert rendered == "&lt;a href=&#34;x&#34;&gt;&amp;&lt;/a&gt;"


def test_html_is_self_contained() -> None:
    page = html_report(make_run(), [])
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "url(http" not in page and "Content-Security-Policy" in page
    assert "<svg" in page and 'class="heat"' in page


def test_html_status_banners() -> None:
    assert 'data-status="clean"' in html_report(make_run([]), []) and "CLEAN" in html_report(make_run([]), [])
    findings = html_report(make_run(), [])
    assert 'data-status="findings"' in findings and "FINDINGS" in findings
    partial = html_report(make_run([], partial=["cloud"], problems=["cloud: SASL authentication failed"]), [])
    assert "PARTIAL SNAPSHOT — not a clean bill of health" in partial
    assert "cloud: SASL authentication failed" in partial and "CLEAN" not in partial


def test_html_lists_every_finding_with_evidence_and_remediation() -> None:
    run = make_run()
    page = html_report(run, [])
    assert page.count('class="finding ') == len(run.findings)
    assert page.count('<dl class="evidence">') == sum(1 for f in run.findings if f["evidence"])
    assert "fix it" in page and "payments.orders" in page and "User:marketing-app" in page
    for check_id in CHECKS:
        assert check_id in page  # the checks table lists every check


@pytest.mark.parametrize("runs", [0, 1, 2, 100])
def test_html_trend_handles_few_and_many_runs(runs: int) -> None:
    history = [{"run_id": f"2026010{1 + i // 60}T00{i % 60:02d}00Z",
                "started": f"2026-01-0{1 + i // 60}T00:{i % 60:02d}:00Z",
                "status": "partial" if i % 7 == 3 else "findings",
                "critical": 1, "high": i % 4, "medium": 0, "low": 0, "info": 0, "total": 1 + i % 4}
               for i in range(runs)]
    page = html_report(make_run(), history)
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert svg.count("<g><title>") == runs + 1  # one bar per run, the current one included
    assert f"{runs + 1} run" in page


def test_write_reports_writes_only_the_formats_asked(tmp_path: Path) -> None:
    run = make_run()
    written = write_reports(run, [], tmp_path / "out", {"json", "sarif"})
    assert written == {"json": tmp_path / "out" / "audit.json", "sarif": tmp_path / "out" / "audit.sarif"}
    assert json.loads(written["json"].read_text())["summary"]["total"] == 5
    assert json.loads(written["sarif"].read_text())["version"] == "2.1.0"
    assert not (tmp_path / "out" / "report.html").exists()
    html_path = write_reports(run, [], tmp_path / "out", {"html"})["html"]
    assert html_path.name == "report.html" and "<!DOCTYPE html>" in html_path.read_text()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["audit.json", "audit.sarif", "report.html"]
    with pytest.raises(ValueError, match="pdf"):
        write_reports(run, [], tmp_path, {"pdf"})
