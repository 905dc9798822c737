"""Per-tenant monitoring files: well-formed, tenant-scoped, no secret values."""

from __future__ import annotations

import json
import re

import yaml

from governance.compile.monitoring import JMX_PATTERN, compile_monitoring

SCOPES = {
    "payments": {"flows": [{"id": "payments-onprem-to-cloud"}]},
    "marketing": {"flows": [{"id": "marketing-onprem-to-cloud"}, {"id": "marketing-onprem-to-dr"}]},
}


def test_files_per_tenant_and_flow():
    files = compile_monitoring(SCOPES, "# generated")
    assert set(files) == {
        "jmx/payments.yaml", "jmx/marketing.yaml", "prometheus/rules.yaml",
        "grafana/payments.json", "grafana/marketing.json", "alertmanager/routes.yaml",
    }


def test_jmx_rule_labels_every_series_with_its_tenant_and_matches_mm2_mbeans():
    config = yaml.safe_load(compile_monitoring(SCOPES, "# g")["jmx/payments.yaml"])
    [rule] = config["rules"]
    assert rule["labels"]["tenant"] == "payments" and rule["labels"]["flow"] == "payments-$1-to-$2"
    mbean = ("kafka.connect.mirror<type=MirrorSourceConnector, source=onprem, target=cloud, "
             "topic=onprem.payments.orders, partition=0><>replication-latency-ms-max")
    match = re.fullmatch(JMX_PATTERN, mbean)
    assert match
    assert match.groups() == ("onprem", "cloud", "onprem.payments.orders", "0", "replication-latency-ms-max")


def test_alerts_and_dashboards_only_see_their_tenant():
    files = compile_monitoring(SCOPES, "# g")
    groups = {g["name"]: g["rules"] for g in yaml.safe_load(files["prometheus/rules.yaml"])["groups"]}
    assert set(groups) == {"mm2gov-payments", "mm2gov-marketing"}
    rules = groups["mm2gov-payments"]
    assert {r["alert"] for r in rules} == {"MM2ReplicationLatencyHigh", "MM2RecordAgeHigh", "MM2FlowSilent"}
    assert all('tenant="payments"' in r["expr"] for r in rules)
    dashboard = json.loads(files["grafana/marketing.json"])
    assert dashboard["uid"] == "mm2gov-marketing"
    assert all('tenant="marketing"' in p["targets"][0]["expr"] for p in dashboard["panels"])


def test_alertmanager_routes_read_webhooks_from_secrets():
    routes = yaml.safe_load(compile_monitoring(SCOPES, "# g")["alertmanager/routes.yaml"])
    assert [r["matchers"] for r in routes["route"]["routes"]] == [['tenant="marketing"'], ['tenant="payments"']]
    slack = next(r for r in routes["receivers"] if r["name"] == "mm2gov-payments")["slack_configs"][0]
    assert slack["api_url_file"].endswith("/mm2gov-alerts-payments/slack-webhook-url")
    assert "api_url" not in slack
