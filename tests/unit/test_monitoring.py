"""Per-tenant monitoring files: well-formed, tenant-scoped, no secret values.

What Prometheus makes of them is asked of the real promtool and Prometheus in
tests/integration/test_prometheus.py; these tests pin the shapes that reasoning relies on.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.models.dashboard import Dashboard as DashboardModel

from governance.compile.monitoring import (
    PROBE_METRIC,
    WORKER_METRIC,
    alertmanager_routes,
    flows_regex,
    grafana_dashboard,
    label_safe,
    promql_string,
    regex_literal,
    source_pattern,
    worker_pattern,
)
from governance.compile.monitoring import compile_monitoring as compile_tenancy_monitoring
from governance.compile.monitoring.rule_tests import MAX_OTHERS, SAMPLE
from governance.model.names import GRAFANA_UID_MAX, PLATFORM_ALERT_RECEIVER, dashboard_uid
from governance.model.tenancy import Flow, parse_tenancy
from governance.probe.serve import ProbeMetrics
from tests.tools.scopes import flow_scope, model_flow, tenant_scope


def flow(tenant: str, source: str, target: str) -> dict[str, Any]:
    return flow_scope(tenant, source, target)


def scoped(**flows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Complete decision scopes of these tenants with these flows (tests/tools/scopes.py)."""
    return {name: tenant_scope(name, flows=owned) for name, owned in flows.items()}


SCOPES = scoped(payments=[flow("payments", "onprem", "cloud")],
                marketing=[flow("marketing", "onprem", "cloud"), flow("marketing", "onprem", "dr")], hr=[])


def compile_monitoring(scopes: dict[str, Any], header: str) -> dict[str, str]:
    return compile_tenancy_monitoring(parse_tenancy(scopes), header)


def rule_groups(files: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """Every tenant's alert group (prometheus/rules/<tenant>.yaml), by group name."""
    return {g["name"]: g["rules"] for path, text in files.items() if path.startswith("prometheus/rules/")
            for g in yaml.safe_load(text)["groups"]}


def test_files_per_tenant_and_flow():
    files = compile_monitoring(SCOPES, "# generated")
    assert set(files) == {
        "jmx/payments.yaml", "jmx/marketing.yaml", "prometheus/rules/payments.yaml",
        "prometheus/rules/marketing.yaml", "grafana/payments.json",
        "grafana/marketing.json", "grafana/hr.json", "alertmanager/routes.yaml",
        "prometheus/tests/payments.yaml", "prometheus/tests/marketing.yaml",
    }


def test_jmx_rules_label_series_with_the_flow_id_names_computes():
    # a tenant and an alias with `-`: the flow label is names.flow_id's, which escapes them, not `<t>-<s>-to-<t>`
    scopes = scoped(**{"pay-eu": [flow("pay-eu", "eu-onprem", "cloud")]})
    config = yaml.safe_load(compile_monitoring(scopes, "# g")["jmx/pay-eu.yaml"])
    labels = [rule["labels"] for rule in config["rules"]]
    assert {(x["tenant"], x["flow"]) for x in labels} == {("pay-eu", "pay--eu-eu--onprem-to-cloud")}


def test_jmx_patterns_match_only_the_flows_own_mbeans():
    [own] = label_safe([model_flow("payments", "onprem", "cloud")])
    mbean = ("kafka.connect.mirror<type=MirrorSourceConnector, source=onprem, target=cloud, "
             "topic=onprem.payments.orders, partition=0><>replication-latency-ms-max")
    match = re.fullmatch(source_pattern(own), mbean)
    assert match and match.groups() == ("onprem.payments.orders", "0", "replication-latency-ms-max")
    assert not re.fullmatch(source_pattern(own), mbean.replace("target=cloud", "target=dr"))
    worker = 'kafka.connect<type=connect-coordinator-metrics, client-id="onprem->cloud"><>assigned-tasks'
    assert re.fullmatch(worker_pattern(own), worker)
    assert not re.fullmatch(worker_pattern(own), worker.replace("onprem->cloud", "onprem->dr"))


def test_every_alert_selects_and_labels_its_own_tenant_and_flow():
    files = compile_monitoring(SCOPES, "# g")
    groups = rule_groups(files)
    assert set(groups) == {"mm2gov-payments", "mm2gov-marketing"}  # hr has no flow to watch
    for tenant, rules in (("payments", groups["mm2gov-payments"]), ("marketing", groups["mm2gov-marketing"])):
        flows = {f["id"] for f in SCOPES[tenant]["flows"]}
        assert {(r["alert"], r["labels"]["flow"]) for r in rules} == {
            (a, f) for a in ("MM2FlowDown", "MM2ReplicationLatencyHigh", "MM2RecordAgeHigh") for f in flows}
        for rule in rules:
            assert rule["labels"]["tenant"] == tenant
            selectors = re.findall(r"\{([^}]*)\}", rule["expr"])
            assert selectors and all(
                s == f'tenant="{tenant}", flow="{rule["labels"]["flow"]}"' for s in selectors), rule["expr"]
    down = next(r for r in groups["mm2gov-payments"] if r["alert"] == "MM2FlowDown")
    assert WORKER_METRIC in down["expr"]


def test_a_flow_with_an_slo_gets_probe_alerts_on_its_own_series_only():
    scopes = {**SCOPES, **scoped(payments=[{**flow("payments", "onprem", "cloud"), "slo": {"latency_p99_ms": 5}}])}
    files = compile_monitoring(scopes, "# g")
    groups = rule_groups(files)
    probe = {r["alert"]: r for r in groups["mm2gov-payments"] if r["alert"].startswith("MM2Probe")}
    assert set(probe) == {"MM2ProbeCanariesLost", "MM2ProbeDuplicates", "MM2ProbeLatencyOverSlo", "MM2ProbeAbsent"}
    assert not any(r["alert"].startswith("MM2Probe") for r in groups["mm2gov-marketing"])
    for rule in probe.values():
        assert PROBE_METRIC in rule["expr"]
        assert all(s == 'tenant="payments", flow="payments-onprem-to-cloud"'
                   for s in re.findall(r"\{([^}]*)\}", rule["expr"])), rule["expr"]
    tests = yaml.safe_load(files["prometheus/tests/payments.yaml"])["tests"]
    assert [c for c in tests if "probe" in c["name"]], "a promtool case for the probe alerts"


def test_rule_tests_run_every_tenants_rules_and_expect_only_their_own_alerts():
    files = compile_monitoring(SCOPES, "# g")
    tests = yaml.safe_load(files["prometheus/tests/marketing.yaml"])
    assert tests["rule_files"] == ["../rules/marketing.yaml", "../rules/payments.yaml"]  # hr has no rules
    case = tests["tests"][0]
    fired = [alert["exp_labels"] for check in case["alert_rule_test"] for alert in check["exp_alerts"]]
    assert fired and all(labels["tenant"] == "marketing" for labels in fired)
    series = " ".join(s["series"] for s in case["input_series"])
    # next to the tenant's own series: another tenant's, and forged ones mixing the two
    assert 'tenant="payments", flow="marketing-onprem-to-cloud"' in series
    assert 'tenant="marketing", flow="payments-onprem-to-cloud"' in series


def test_flow_values_that_would_need_escaping_in_promql_are_refused():
    with pytest.raises(ValueError, match="cannot be a monitoring label value"):
        label_safe([Flow.model_validate({**flow("x", "a", "b"), "id": 'x"} or vector(1) #'})])


def panel_targets(dashboard: dict) -> list[dict]:
    return [t for p in dashboard["panels"] if p["type"] != "row" for t in p["targets"]]


def test_every_panel_query_selects_the_tenant_and_its_flow_variable():
    """Every selector of every query is `{tenant="<t>", flow=~"$flow"}`; what PromQL makes of it, and of a
    hostile tenant name, promtool's parser says in tests/integration/test_prometheus.py."""
    dashboard = json.loads(compile_monitoring(SCOPES, "# g")["grafana/marketing.json"])
    assert dashboard["uid"] == "mm2gov-marketing"
    targets = panel_targets(dashboard)
    assert len(targets) >= 10
    for target in targets:
        expr = target["expr"]
        assert expr.count("{") == expr.count('{tenant="marketing", flow=~"$flow"}') >= 1, expr
        assert "by (tenant, flow" in expr, expr  # results keep the labels that say whose they are
        assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}


def test_dashboard_uids_fit_grafana_and_stay_apart():
    long = "t" * 63
    uids = {dashboard_uid(t) for t in ("payments", long, long[:-1], "mm2gov-" + long[:40])}
    assert len(uids) == 4 and all(len(u) <= GRAFANA_UID_MAX and re.fullmatch(r"[a-z0-9_-]+", u) for u in uids)
    assert dashboard_uid("payments") == "mm2gov-payments"
    assert json.loads(compile_monitoring(scoped(**{long: []}), "# g")[f"grafana/{long}.json"])["uid"] == \
        dashboard_uid(long)


def test_the_flow_variable_offers_only_the_tenants_flows_and_no_tenant_is_a_variable():
    dashboard = json.loads(compile_monitoring(SCOPES, "# g")["grafana/marketing.json"])
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert set(variables) == {"datasource", "flow"}
    assert variables["datasource"]["query"] == "prometheus"
    flows = [f["id"] for f in SCOPES["marketing"]["flows"]]
    flow = variables["flow"]
    assert flow["type"] == "custom" and flow["query"].split(",") == flows
    assert flow["includeAll"] and flow["allValue"] == "|".join(flows) and not flow["allowCustomValue"]
    assert "payments" not in json.dumps(dashboard)


def test_dashboards_read_back_unchanged_through_grafanas_own_model():
    """The written JSON is what the SDK's dashboard model (generated from Grafana's schema) reads and writes."""
    register_default_plugins()
    written = json.loads(compile_monitoring(SCOPES, "# g")["grafana/marketing.json"])
    del written["__generated"]
    assert json.loads(JSONEncoder().encode(DashboardModel.from_json(written))) == written


def test_dashboards_show_mm2_and_probe_figures():
    dashboard = json.loads(compile_monitoring(SCOPES, "# g")["grafana/payments.json"])
    exprs = " ".join(t["expr"] for t in panel_targets(dashboard))
    for metric in ("kafka_connect_worker_assigned_tasks", "replication_latency_ms_max", "replication_latency_ms_avg",
                   "record_age_ms_max", "record_rate", "byte_rate", "mm2gov_probe_latency_seconds_bucket",
                   "mm2gov_probe_canaries_lost_total", "mm2gov_probe_canaries_duplicated_total",
                   "mm2gov_probe_slo_met"):
        assert metric in exprs


def test_the_probe_metrics_the_dashboards_read_are_the_ones_the_probe_exports():
    exported = {sample.name for family in ProbeMetrics().registry.collect() for sample in family.samples}
    exported |= {family.name for family in ProbeMetrics().registry.collect()}
    metrics = {t["expr"] for t in panel_targets(grafana_dashboard("t", ["t-a-to-b"]))}
    read = {m for expr in metrics for m in re.findall(r"\b(" + PROBE_METRIC + r"[a-z0-9_]+)\{", expr)}
    assert len(read) >= 6 and read <= {*exported, *(f"{n}_total" for n in exported),
                                       *(f"{n}_bucket" for n in exported)}, read - exported


@pytest.mark.parametrize("value", ['a"} or vector(1) or x{y="', "back\\slash", "new\nline", "tab\t\u0001", "ü€😀"])
def test_promql_strings_hold_any_value_as_one_literal(value):
    literal = promql_string(value)
    assert literal.startswith('"') and literal.endswith('"') and json.loads(literal) == value
    assert "\n" not in literal and not re.search(r'(?<!\\)"', literal[1:-1])


def test_flow_regexes_match_exactly_the_flows():
    assert flows_regex(["a-b", "c.d"]) == r"a-b|c\.d"
    assert re.fullmatch(regex_literal(r"x.y*z[]\\$"), r"x.y*z[]\\$")
    assert not re.fullmatch(flows_regex(["c.d"]), "cxd")


def test_alertmanager_routes_read_webhooks_from_secrets():
    routes = yaml.safe_load(compile_monitoring(SCOPES, "# g")["alertmanager/routes.yaml"])
    assert [(r["matchers"], r["receiver"]) for r in routes["route"]["routes"]] == [
        (['tenant="hr"'], "mm2gov-hr"), (['tenant="marketing"'], "mm2gov-marketing"),
        (['tenant="payments"'], "mm2gov-payments")]
    slack = next(r for r in routes["receivers"] if r["name"] == "mm2gov-payments")["slack_configs"][0]
    assert slack["api_url_file"].endswith("/mm2gov-alerts-payments/slack-webhook-url")
    assert "api_url" not in slack


def test_a_tenant_named_platform_cannot_take_the_platforms_receiver():
    routes = alertmanager_routes(["platform"])
    names = [r["name"] for r in routes["receivers"]]
    assert len(names) == len(set(names)) == 2
    assert routes["route"]["receiver"] == PLATFORM_ALERT_RECEIVER != routes["route"]["routes"][0]["receiver"]


def estate(count: int, *extra: str) -> dict[str, dict[str, Any]]:
    """`count` tenants t0000... (names of one length) with three flows each, and tenants named `extra`."""
    names = [f"t{i:04d}" for i in range(count)] + list(extra)
    return scoped(**{name: [flow(name, s, t) for s, t in (("onprem", "cloud"), ("onprem", "dr"), ("dr", "cloud"))]
                     for name in names})


def test_one_tenants_rule_tests_do_not_grow_with_the_estate():
    """What keeps `generate` linear: a tenant's promtool tests load a bounded set of other tenants' rules and
    series (rule_tests.Neighbours), so their size is the same in an estate of 20 tenants and of 200."""
    sizes, loaded = set(), set()
    for count in (20, 60, 200):
        files = compile_monitoring(estate(count), "# g")
        text = files["prometheus/tests/t0010.yaml"]
        sizes.add(len(text.encode()))
        tests = yaml.safe_load(text)
        assert len(tests["rule_files"]) == 1 + 2 + SAMPLE  # its own, the names before and after it, the sample
        loaded.add(len(tests["rule_files"]))
        assert sum(len(case["input_series"]) for case in tests["tests"]) < 20 * len(tests["rule_files"])
    assert len(sizes) == 1 and len(loaded) == 1, (sizes, loaded)


def test_rule_tests_load_the_tenants_that_look_alike():
    """Names that are a leading part of the tenant's, or start with it, or sort next to it: their rules and
    series are in the tenant's tests, however large the estate (a prefix matcher would confuse them)."""
    files = compile_monitoring(estate(40, "t1", "t10", "t100", "t1000", "t10000", "t11"), "# g")
    loaded = yaml.safe_load(files["prometheus/tests/t10.yaml"])["rule_files"]
    assert {"../rules/t1.yaml", "../rules/t100.yaml", "../rules/t1000.yaml", "../rules/t10.yaml"} <= set(loaded)
    assert len(loaded) <= MAX_OTHERS + 1
    series = " ".join(s["series"] for case in yaml.safe_load(files["prometheus/tests/t10.yaml"])["tests"]
                      for s in case["input_series"])
    assert 'tenant="t1", flow="t1-onprem-to-cloud"' in series and 'tenant="t100", flow=' in series
    assert {"../rules/t10.yaml", "../rules/t100.yaml", "../rules/t10000.yaml"} <= set(
        yaml.safe_load(files["prometheus/tests/t1000.yaml"])["rule_files"])
