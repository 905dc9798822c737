"""Per-tenant monitoring of MM2's own metrics (kafka.connect.mirror): each line of business sees,
and is alerted on, its own replication lag and nobody else's.

- `jmx/<tenant>.yaml`: Prometheus JMX exporter config for the tenant's MM2s, every series labelled
  with its tenant (static: one MM2 per tenant flow) and its flow (`<tenant>-<source>-to-<target>`,
  built from the MBean's source and target);
- `prometheus/rules.yaml`: alert rules, one group per tenant, each filtered on its tenant;
- `grafana/<tenant>.json`: a dashboard per tenant;
- `alertmanager/routes.yaml`: a route and receiver per tenant; the Slack webhook URL is read
  from a mounted Secret (`api_url_file`), never written here.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

METRIC_PREFIX = "kafka_connect_mirror_source_connector_"
JMX_PATTERN = (r"kafka.connect.mirror<type=MirrorSourceConnector, source=(.+), target=(.+), topic=(.+), "
               r"partition=([0-9]+)><>([a-z-]+)")
LATENCY_THRESHOLD_MS = 60_000
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when present
ALERT_SECRETS_PATH = "/etc/alertmanager/secrets"


def jmx_exporter_config(tenant: str) -> dict[str, Any]:
    return {
        "lowercaseOutputName": True,
        "lowercaseOutputLabelNames": True,
        "rules": [{
            "pattern": JMX_PATTERN,
            "name": METRIC_PREFIX + "$5",
            "type": "GAUGE",
            "labels": {"tenant": tenant, "flow": f"{tenant}-$1-to-$2", "source": "$1", "target": "$2",
                       "topic": "$3", "partition": "$4"},
        }],
    }


def alert_rules(tenant: str) -> dict[str, Any]:
    """The tenant's alert group (its series only)."""
    selector = f'tenant="{tenant}"'
    return {"name": f"mm2gov-{tenant}", "rules": [
        {"alert": "MM2ReplicationLatencyHigh",
         "expr": f"max by (tenant, flow) ({METRIC_PREFIX}replication_latency_ms_max{{{selector}}}) "
                 f"> {LATENCY_THRESHOLD_MS}",
         "for": "10m", "labels": {"severity": "warning", "tenant": tenant},
         "annotations": {"summary": "MirrorMaker 2 replication latency of {{ $labels.flow }} is over 60 s",
                         "runbook": "Check the flow's MM2 log and the target cluster's health."}},
        {"alert": "MM2RecordAgeHigh",
         "expr": f"max by (tenant, flow) ({METRIC_PREFIX}record_age_ms_max{{{selector}}}) > 300000",
         "for": "15m", "labels": {"severity": "warning", "tenant": tenant},
         "annotations": {"summary": "Records of {{ $labels.flow }} reach the target over 5 minutes old"}},
        {"alert": "MM2FlowSilent",
         "expr": f"absent({METRIC_PREFIX}record_count{{{selector}}})",
         "for": "30m", "labels": {"severity": "critical", "tenant": tenant},
         "annotations": {"summary": f"No MirrorMaker 2 metrics for tenant {tenant}: its flows are down"}},
    ]}


def grafana_dashboard(tenant: str, flows: list[str]) -> dict[str, Any]:
    def panel(index: int, title: str, expr: str, unit: str) -> dict[str, Any]:
        return {"id": index + 1, "type": "timeseries", "title": title, "datasource": {"uid": "${datasource}"},
                "gridPos": {"x": 12 * (index % 2), "y": 8 * (index // 2), "w": 12, "h": 8},
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "targets": [{"refId": "A", "expr": expr, "legendFormat": "{{flow}} {{topic}}"}]}

    selector = f'tenant="{tenant}", flow=~"$flow"'
    return {
        "uid": f"mm2gov-{tenant}", "title": f"MirrorMaker 2 — {tenant}", "tags": ["mm2gov", tenant],
        "schemaVersion": 39, "time": {"from": "now-6h", "to": "now"}, "refresh": "1m",
        "templating": {"list": [
            {"name": "datasource", "type": "datasource", "query": "prometheus"},
            {"name": "flow", "type": "custom", "multi": True, "includeAll": True,
             "query": ",".join(flows), "current": {"text": "All", "value": "$__all"}},
        ]},
        "panels": [
            panel(0, "Replication latency (max)", f"max by (flow, topic) ({METRIC_PREFIX}replication_latency_ms_max"
                  f"{{{selector}}})", "ms"),
            panel(1, "Record age (max)", f"max by (flow, topic) ({METRIC_PREFIX}record_age_ms_max{{{selector}}})",
                  "ms"),
            panel(2, "Records replicated per second",
                  f"sum by (flow, topic) (rate({METRIC_PREFIX}record_count{{{selector}}}[5m]))", "ops"),
            panel(3, "Bytes replicated per second", f"sum by (flow, topic) ({METRIC_PREFIX}byte_rate{{{selector}}})",
                  "Bps"),
        ],
    }


def alertmanager_routes(tenants: list[str]) -> dict[str, Any]:
    return {
        "route": {"receiver": "mm2gov-platform", "group_by": ["tenant", "alertname", "flow"],
                  "routes": [{"matchers": [f'tenant="{t}"'], "receiver": f"mm2gov-{t}"} for t in tenants]},
        "receivers": [{"name": "mm2gov-platform"}] + [
            {"name": f"mm2gov-{t}", "slack_configs": [{
                "api_url_file": f"{ALERT_SECRETS_PATH}/mm2gov-alerts-{t}/slack-webhook-url",
                "send_resolved": True,
                "title": f"[{t}] {{{{ .CommonLabels.alertname }}}}",
                "text": "{{ range .Alerts }}{{ .Annotations.summary }}\n{{ end }}"}]}
            for t in tenants],
    }


def compile_monitoring(scopes: dict[str, Any], header: str) -> dict[str, str]:
    """Relative path -> file text; YAML files carry the generated-by header, JSON files a field."""
    files: dict[str, str] = {}

    def as_yaml(data: dict[str, Any]) -> str:
        return header + "\n" + yaml.dump(data, Dumper=DUMPER, sort_keys=False, allow_unicode=True)

    tenants = sorted(scopes)
    for tenant in tenants:
        flows = [f["id"] for f in scopes[tenant]["flows"]]
        if flows:
            files[f"jmx/{tenant}.yaml"] = as_yaml(jmx_exporter_config(tenant))
        dashboard = {"__generated": header.lstrip("# "), **grafana_dashboard(tenant, flows)}
        files[f"grafana/{tenant}.json"] = json.dumps(dashboard, indent=1, ensure_ascii=False) + "\n"
    files["prometheus/rules.yaml"] = as_yaml({"groups": [alert_rules(t) for t in tenants]})
    files["alertmanager/routes.yaml"] = as_yaml(alertmanager_routes(tenants))
    return files
