"""Per-tenant monitoring of MM2's own metrics: each line of business sees, and is alerted on, its own
flows and nobody else's.

- `jmx/<tenant>.yaml`: Prometheus JMX exporter config for the tenant's MM2s (one MM2 process per flow).
  One rule set per flow, matching that flow's source and target cluster aliases literally; every series
  gets the tenant and the flow id (names.flow_id, via the OPA scope) as static labels, never labels built
  from what the MBean says, so no topic, group or alias a tenant chooses can make a series claim another
  tenant or flow. Series: MirrorSourceConnector's per-partition replication metrics, and the flow's
  Connect worker in its group (`connect-coordinator-metrics` of client `<source>-><target>`), which exists
  whenever the flow's MM2 runs, with or without topics to replicate;
- `prometheus/rules.yaml`: alert rules, one group per tenant, one rule per flow and alert, each selecting
  its tenant's and flow's series by exact labels and labelling its alert with them (static labels);
- `prometheus/tests/<tenant>.yaml`: `promtool test rules` unit tests of the tenant's alerts, with other
  tenants' series and series forged to carry the tenant's flow id next to them;
- `grafana/<tenant>.json`: a dashboard per tenant;
- `alertmanager/routes.yaml`: a route and receiver per tenant, matching on the alert's tenant label; the
  Slack webhook URL is read from a mounted Secret (`api_url_file`), never written here.

The probe's end-to-end alerts (latency over the tenant's SLO, loss, duplicates) come with `mm2gov probe`.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

with warnings.catch_warnings():  # the classic dashboard model warns on import that a v2 model exists (see below)
    warnings.simplefilter("ignore", DeprecationWarning)
    from grafana_foundation_sdk.builders.common import ReduceDataOptions
    from grafana_foundation_sdk.builders.dashboard import CustomVariable, Dashboard, DatasourceVariable, Row
    from grafana_foundation_sdk.builders.prometheus import Dataquery as PrometheusQuery
    from grafana_foundation_sdk.builders.stat import Panel as StatPanel
    from grafana_foundation_sdk.builders.timeseries import Panel as TimeseriesPanel
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.models.common import DataSourceRef
    from grafana_foundation_sdk.models.dashboard import VariableOption

from governance.model.names import PLATFORM_ALERT_RECEIVER, alert_receiver, alert_webhook_secret, dashboard_uid
from governance.model.tenancy import Flow, Tenancy

METRIC_PREFIX = "kafka_connect_mirror_source_connector_"
WORKER_METRIC = "kafka_connect_worker_assigned_tasks"  # the flow's Connect worker: its tasks in the group
LATENCY_METRIC = METRIC_PREFIX + "replication_latency_ms_max"
RECORD_AGE_METRIC = METRIC_PREFIX + "record_age_ms_max"
LATENCY_THRESHOLD_MS = 60_000
RECORD_AGE_THRESHOLD_MS = 300_000
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when present
ALERT_SECRETS_PATH = "/etc/alertmanager/secrets"  # where each tenant's webhook Secret is mounted
SLACK_WEBHOOK_KEY = "slack-webhook-url"
# label values mm2gov writes into PromQL string literals (escaped anyway): ids and aliases are DNS-label-like
SAFE_LABEL_VALUE = re.compile(r"^[a-z0-9-]+$")


def promql_string(value: str) -> str:
    r"""`value` as a PromQL double-quoted string literal: whatever it holds, it stays one string.

    PromQL strings take Go's escapes; JSON's (`\"`, `\\`, `\n`, `\u00XX` for the other control characters)
    are a subset of them, as long as no character is written as a surrogate pair (ensure_ascii off).
    """
    return json.dumps(value, ensure_ascii=False)


def label_safe(flows: Sequence[Flow]) -> Sequence[Flow]:
    """The flows whose id, source and target may be static label values as they are (names.flow_id and the
    cluster aliases always can: anything else is refused, never escaped into a selector)."""
    for flow in flows:
        for value in (flow.id, flow.source, flow.target):
            if not SAFE_LABEL_VALUE.match(value):
                raise ValueError(f"flow {flow.id!r}: {value!r} cannot be a monitoring label value")
    return flows


def probed(flow: Flow) -> bool:
    """The flow has an `slo`: `mm2gov probe` measures it, and its probe alerts exist."""
    return flow.slo is not None


def source_pattern(flow: Flow) -> str:
    """MirrorSourceConnector's per-partition MBeans of this flow's source and target: (topic, partition, attribute)."""
    return (f"kafka.connect.mirror<type=MirrorSourceConnector, source={flow.source}, target={flow.target}, "
            r"topic=(.+), partition=([0-9]+)><>([a-z-]+)")


def worker_pattern(flow: Flow) -> str:
    """The flow's Connect worker in its group: MM2 names its client `<source>-><target>` (quoted in the MBean)."""
    return (f'kafka.connect<type=connect-coordinator-metrics, client-id="?{flow.source}->{flow.target}"?>'
            "<>assigned-tasks")


def jmx_exporter_config(tenant: str, flows: list[Flow]) -> dict[str, Any]:
    rules: list[dict[str, Any]] = []
    for flow in flows:
        static = {"tenant": tenant, "flow": flow.id}
        rules += [
            {"pattern": worker_pattern(flow), "name": WORKER_METRIC, "type": "GAUGE", "labels": static},
            {"pattern": source_pattern(flow), "name": METRIC_PREFIX + "$3", "type": "GAUGE",
             "labels": {**static, "source": flow.source, "target": flow.target, "topic": "$1", "partition": "$2"}},
        ]
    return {"lowercaseOutputName": True, "lowercaseOutputLabelNames": True, "rules": rules}


@dataclass(frozen=True)
class Alert:
    """One generated alert rule: its name, the flow it watches, expression, `for`, labels and annotations."""

    name: str
    tenant: str
    flow: str
    expr: str
    wait: str
    severity: str
    summary: str
    description: str

    @property
    def labels(self) -> dict[str, str]:
        return {"severity": self.severity, "tenant": self.tenant, "flow": self.flow}

    @property
    def annotations(self) -> dict[str, str]:
        return {"summary": self.summary, "description": self.description}

    def rule(self) -> dict[str, Any]:
        return {"alert": self.name, "expr": self.expr, "for": self.wait, "labels": self.labels,
                "annotations": self.annotations}


def flow_alerts(tenant: str, flow: Flow) -> list[Alert]:
    """The alerts on one flow; every selector names the tenant and the flow exactly."""
    own = f"{{tenant={promql_string(tenant)}, flow={promql_string(flow.id)}}}"
    return [
        Alert("MM2FlowDown", tenant, flow.id,
              f"absent({WORKER_METRIC}{own}) or sum({WORKER_METRIC}{own}) == 0", "2m", "critical",
              f"MirrorMaker 2 flow {flow.id} is down",
              f"No MirrorMaker 2 of flow {flow.id} ({flow.source} to {flow.target}) is scraped with tasks for 2 "
              "minutes: nothing replicates. Check the MM2 process or pod and its log."),
        Alert("MM2ReplicationLatencyHigh", tenant, flow.id, f"max({LATENCY_METRIC}{own}) > {LATENCY_THRESHOLD_MS}",
              "10m", "warning",
              f"MirrorMaker 2 replication latency of {flow.id} is over {LATENCY_THRESHOLD_MS // 1000} s",
              f"Records of flow {flow.id} reach {flow.target} over {LATENCY_THRESHOLD_MS // 1000} s after they were "
              f"written on {flow.source}, for 10 minutes. Check the flow's MM2 log and {flow.target}'s health."),
        Alert("MM2RecordAgeHigh", tenant, flow.id, f"max({RECORD_AGE_METRIC}{own}) > {RECORD_AGE_THRESHOLD_MS}",
              "15m", "warning", f"MirrorMaker 2 reads records of {flow.id} over {RECORD_AGE_THRESHOLD_MS // 60000} "
              "minutes old",
              f"The flow's MM2 consumes records on {flow.source} over {RECORD_AGE_THRESHOLD_MS // 60000} minutes "
              "after they were written, for 15 minutes: it is falling behind its source."),
    ]


PROBE_STALE_SECONDS = 600  # no probe run of a flow for this long: nobody measures its SLO


def probe_alerts(tenant: str, flow: Flow) -> list[Alert]:
    """The alerts on what `mm2gov probe --serve` measures of one flow with an `slo` (governance/probe/serve.py)."""
    own = f"{{tenant={promql_string(tenant)}, flow={promql_string(flow.id)}}}"
    last_run = f"{PROBE_METRIC}last_run_timestamp_seconds{own}"
    return [
        Alert("MM2ProbeCanariesLost", tenant, flow.id, f"increase({PROBE_METRIC}canaries_lost_total{own}[10m]) > 0",
              "0m", "critical", f"Records of flow {flow.id} were lost",
              f"Canaries the probe wrote on {flow.source} did not reach {flow.target} within the probe's wait in the "
              "last 10 minutes: the flow lost records, or is so late that it missed its SLO. Check the flow's MM2."),
        Alert("MM2ProbeDuplicates", tenant, flow.id,
              f"increase({PROBE_METRIC}canaries_duplicated_total{own}[10m]) > 0", "0m", "warning",
              f"Flow {flow.id} copied records twice",
              f"The probe read canaries of flow {flow.id} more than once on {flow.target} in the last 10 minutes "
              "(an at-least-once MM2 restarted): consumers that are not idempotent saw duplicates."),
        Alert("MM2ProbeLatencyOverSlo", tenant, flow.id,
              f"max({PROBE_METRIC}latency_p99_seconds{own}) > max({PROBE_METRIC}slo_latency_p99_seconds{own})",
              "10m", "warning", f"End-to-end latency of {flow.id} is over its SLO",
              f"The probe's p99 end-to-end latency from {flow.source} to {flow.target} has been over the flow's "
              "slo.latency_p99_ms for 10 minutes."),
        Alert("MM2ProbeAbsent", tenant, flow.id,
              f"absent({last_run}) or time() - max({last_run}) > {PROBE_STALE_SECONDS}", "5m", "warning",
              f"Nobody measures the SLO of {flow.id}",
              f"No probe run of flow {flow.id} ended in the last {PROBE_STALE_SECONDS // 60} minutes: start or fix "
              "its `mm2gov probe --serve` (k8s/probe), or the flow's SLO is not watched."),
    ]


def alert_rules(tenant: str, flows: list[Flow]) -> dict[str, Any]:
    """The tenant's alert group (its flows' series only)."""
    alerts = [a for f in flows for a in flow_alerts(tenant, f) + (probe_alerts(tenant, f) if probed(f) else [])]
    return {"name": f"mm2gov-{tenant}", "rules": [a.rule() for a in alerts]}


def _series(metric: str, labels: dict[str, str]) -> str:
    return metric + "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _expected(alerts: list[Alert]) -> list[dict[str, Any]]:
    return [{"exp_labels": a.labels, "exp_annotations": a.annotations} for a in alerts]


def rule_tests(tenant: str, flows_by_tenant: dict[str, list[Flow]]) -> dict[str, Any]:
    """`promtool test rules` for the tenant's alerts, all tenants' rules loaded (alert names are shared).

    Every flow of every tenant is up, but the tenant's first flow, whose worker series ends at 10m (first
    case) or reports no task from 10m (second case): its MM2FlowDown fires by 16m (2m `for`) with its own
    labels, although a series forged with another tenant's label and this flow id stays up. The tenant's last
    flow replicates slowly and reads old records: its latency and record-age alerts fire, and nobody's fire
    for series forged with the tenant's label and another tenant's flow id, or another tenant's label and
    this tenant's flow id.
    """
    flows = flows_by_tenant[tenant]
    down, slow = flows[0], flows[-1]
    others = [(t, f.id) for t in sorted(flows_by_tenant) if t != tenant for f in flows_by_tenant[t]]
    neighbour, neighbour_flow = others[0] if others else (f"{tenant}-neighbour", f"{tenant}-neighbour-x-to-y")

    def workers(down_values: str) -> list[dict[str, str]]:
        series = [{"series": _series(WORKER_METRIC, {"tenant": owner, "flow": flow.id}),
                   "values": down_values if (owner, flow) == (tenant, down) else "2x30"}
                  for owner, owned in sorted(flows_by_tenant.items()) for flow in owned]
        return [*series, {"series": _series(WORKER_METRIC, {"tenant": neighbour, "flow": down.id}), "values": "2x30"}]

    replication = []
    part = {"topic": "t", "partition": "0"}
    for metric, healthy, high in ((LATENCY_METRIC, 1_000, LATENCY_THRESHOLD_MS * 2),
                                  (RECORD_AGE_METRIC, 1_000, RECORD_AGE_THRESHOLD_MS * 2)):
        for flow in flows:
            value = high if flow == slow else healthy
            replication.append({"series": _series(metric, {"tenant": tenant, "flow": flow.id, **part}),
                                "values": f"{value}x30"})
        for forged in ({"tenant": tenant, "flow": neighbour_flow}, {"tenant": neighbour, "flow": slow.id}):
            replication.append({"series": _series(metric, {**forged, **part}), "values": f"{high * 10}x30"})
    flow_down = _expected([a for a in flow_alerts(tenant, down) if a.name == "MM2FlowDown"])
    slow_alerts = {a.name: a for a in flow_alerts(tenant, slow)}
    checks = [
        {"eval_time": "5m", "alertname": "MM2FlowDown", "exp_alerts": []},
        {"eval_time": "9m", "alertname": "MM2ReplicationLatencyHigh", "exp_alerts": []},
        {"eval_time": "16m", "alertname": "MM2FlowDown", "exp_alerts": flow_down},
        {"eval_time": "16m", "alertname": "MM2ReplicationLatencyHigh",
         "exp_alerts": _expected([slow_alerts["MM2ReplicationLatencyHigh"]])},
        {"eval_time": "14m", "alertname": "MM2RecordAgeHigh", "exp_alerts": []},
        {"eval_time": "16m", "alertname": "MM2RecordAgeHigh",
         "exp_alerts": _expected([slow_alerts["MM2RecordAgeHigh"]])},
    ]
    no_tasks = [{"eval_time": "5m", "alertname": "MM2FlowDown", "exp_alerts": []},
                {"eval_time": "16m", "alertname": "MM2FlowDown", "exp_alerts": flow_down}]
    tests = [
        {"name": f"{tenant}: its flows alert, forged and other tenants' series do not", "interval": "1m",
         "input_series": workers("2x9 stale") + replication, "alert_rule_test": checks},
        {"name": f"{tenant}: a flow whose workers hold no task is down", "interval": "1m",
         "input_series": workers("2x9 0x20"), "alert_rule_test": no_tasks},
    ]
    if measured := [f for f in flows if probed(f)]:
        tests.append(_probe_rule_test(tenant, measured[0], flows_by_tenant, neighbour, neighbour_flow))
    return {"rule_files": ["../rules.yaml"], "evaluation_interval": "1m", "tests": tests}


def _probe_rule_test(tenant: str, bad: Flow, flows_by_tenant: dict[str, list[Flow]], neighbour: str,
                     neighbour_flow: str) -> dict[str, Any]:
    """Every probed flow of every tenant is probed healthily, but `bad`: from 10m its probe loses canaries and
    its p99 is over its SLO; its alerts fire with its labels, nobody's for forged series of either label."""
    def series(metric: str, owner: str, flow_id: str, values: str) -> dict[str, str]:
        return {"series": _series(PROBE_METRIC + metric, {"tenant": owner, "flow": flow_id}), "values": values}

    inputs = []
    for owner, owned in sorted(flows_by_tenant.items()):
        for flow in (f for f in owned if probed(f)):
            broken = (owner, flow) == (tenant, bad)
            inputs += [series("last_run_timestamp_seconds", owner, flow.id, "0+60x30"),
                       series("canaries_lost_total", owner, flow.id, "0x9 1+1x20" if broken else "0x30"),
                       series("canaries_duplicated_total", owner, flow.id, "0x30"),
                       series("latency_p99_seconds", owner, flow.id, "0.5x9 50x20" if broken else "0.5x30"),
                       series("slo_latency_p99_seconds", owner, flow.id, "10x30")]
    for owner, flow_id in ((tenant, neighbour_flow), (neighbour, bad.id)):
        inputs += [series("canaries_lost_total", owner, flow_id, "0+5x30"),
                   series("canaries_duplicated_total", owner, flow_id, "0+5x30"),
                   series("latency_p99_seconds", owner, flow_id, "90x30")]
    alerts = {a.name: _expected([a]) for a in probe_alerts(tenant, bad)}
    return {"name": f"{tenant}: a flow whose probe loses canaries and misses its latency SLO alerts, no other",
            "interval": "1m", "input_series": inputs, "alert_rule_test": [
                {"eval_time": "9m", "alertname": "MM2ProbeCanariesLost", "exp_alerts": []},
                {"eval_time": "12m", "alertname": "MM2ProbeCanariesLost", "exp_alerts": alerts["MM2ProbeCanariesLost"]},
                {"eval_time": "12m", "alertname": "MM2ProbeDuplicates", "exp_alerts": []},
                {"eval_time": "15m", "alertname": "MM2ProbeLatencyOverSlo", "exp_alerts": []},
                {"eval_time": "21m", "alertname": "MM2ProbeLatencyOverSlo",
                 "exp_alerts": alerts["MM2ProbeLatencyOverSlo"]},
                {"eval_time": "21m", "alertname": "MM2ProbeAbsent", "exp_alerts": []},
            ]}


# -- dashboards ------------------------------------------------------------------------------------------------
# Built with Grafana's own grafana-foundation-sdk (Grafana Labs, Apache-2.0, typed builders generated from
# Grafana's schemas, released with Grafana) rather than grafanalib (community-kept, no release since 2024).
# The classic dashboard JSON model: what file provisioning and /api/dashboards/db import on every Grafana
# in use (the SDK's v2 model needs Grafana 12's v2 dashboard API).

PROBE_METRIC = "mm2gov_probe_"  # what `mm2gov probe --serve` exports (governance/probe/serve.py), per tenant and flow
FLOW_VARIABLE = "flow"
BY = "tenant, flow"  # what every panel aggregates by: its series keep the labels that say whose they are
RATE_INTERVAL = "$__rate_interval"  # Grafana's: at least four scrape intervals, so rate() sees two samples
GO_REGEX_META = frozenset("\\.+*?()|[]{}^$")  # what Go's regexp.QuoteMeta escapes (Prometheus matchers are RE2)


def regex_literal(value: str) -> str:
    """An RE2 regex matching exactly `value` (Go's regexp.QuoteMeta)."""
    return "".join("\\" + c if c in GO_REGEX_META else c for c in value)


def flows_regex(flows: list[str]) -> str:
    """The regex of the flow variable's "All": the tenant's own flows, never `.*`."""
    return "|".join(regex_literal(f) for f in flows)


def tenant_selector(tenant: str) -> str:
    """Inside every panel query's braces: the tenant's label exactly, and the flows the flow variable selects.

    The flow variable's "All" is `flows_regex` and its values the tenant's flow ids (a custom variable, no
    value of the viewer's own), so a panel never reaches past the tenant's flows; the tenant matcher is fixed,
    whatever the variable holds.
    """
    return f'tenant={promql_string(tenant)}, {FLOW_VARIABLE}=~"${FLOW_VARIABLE}"'


@dataclass(frozen=True)
class PanelSpec:
    """One panel: its title, what it shows, kind ("timeseries" or "stat"), unit, and (legend, expr) targets."""

    title: str
    description: str
    kind: str
    unit: str
    targets: tuple[tuple[str, str], ...]


def panel_specs(tenant: str) -> list[tuple[str, list[PanelSpec]]]:
    """The dashboard's rows and panels; every query selects with `tenant_selector`."""
    own = "{" + tenant_selector(tenant) + "}"
    mm2 = METRIC_PREFIX

    def by_flow(aggregation: str, metric: str) -> str:
        return f"{aggregation} by ({BY}) ({metric}{own})"

    def increase(counter: str) -> str:
        return f"sum by ({BY}) (increase({PROBE_METRIC}{counter}_total{own}[{RATE_INTERVAL}]))"

    replication = [
        PanelSpec("Flow up: tasks assigned", "Tasks the flow's MM2 worker holds; 0 or no value: nothing replicates "
                  "(alert MM2FlowDown).", "stat", "none", (("{{flow}}", by_flow("sum", WORKER_METRIC)),)),
        PanelSpec("Replication latency (MM2)", "MM2's replication-latency-ms: record timestamp on the source to "
                  "the target's acknowledgement, max and average over the flow's partitions.", "timeseries", "ms",
                  (("{{flow}} max", by_flow("max", mm2 + "replication_latency_ms_max")),
                   ("{{flow}} avg", by_flow("avg", mm2 + "replication_latency_ms_avg")))),
        PanelSpec("Record age (MM2)", "How old records are when MM2 reads them on the source: growing means "
                  "the flow falls behind (alert MM2RecordAgeHigh).", "timeseries", "ms",
                  (("{{flow}} max", by_flow("max", mm2 + "record_age_ms_max")),
                   ("{{flow}} avg", by_flow("avg", mm2 + "record_age_ms_avg")))),
        PanelSpec("Throughput: records/s", "Records MM2 replicates per second (record-rate).", "timeseries", "ops",
                  (("{{flow}}", by_flow("sum", mm2 + "record_rate")),)),
        PanelSpec("Throughput: bytes/s", "Bytes MM2 replicates per second (byte-rate).", "timeseries", "Bps",
                  (("{{flow}}", by_flow("sum", mm2 + "byte_rate")),)),
    ]
    probe = [
        PanelSpec("End-to-end latency (probe)", "Canaries from send on the source to read on the target: p99 of "
                  "the last run, p50 over the interval, and the flow's SLO.", "timeseries", "s",
                  (("{{flow}} p99", by_flow("max", PROBE_METRIC + "latency_p99_seconds")),
                   ("{{flow}} p50", f"histogram_quantile(0.5, sum by ({BY}, le) (rate("
                    f"{PROBE_METRIC}latency_seconds_bucket{own}[{RATE_INTERVAL}])))"),
                   ("{{flow}} SLO p99", by_flow("max", PROBE_METRIC + "slo_latency_p99_seconds")))),
        PanelSpec("Canaries lost, duplicated, out of order (probe)", "Per interval: canaries not read back in "
                  "time, extra copies, read out of their partition's order, or in another partition number "
                  "(affinity broken).", "timeseries", "none",
                  tuple((f"{{{{flow}}}} {what}", increase(f"canaries_{what}"))
                        for what in ("lost", "duplicated", "reordered", "misplaced"))),
        PanelSpec("SLO met (probe)", "1: the flow's last probe run met its SLO; 0: missed or failed.", "stat",
                  "none", (("{{flow}}", by_flow("min", PROBE_METRIC + "slo_met")),)),
    ]
    return [("MirrorMaker 2", replication), ("End to end (mm2gov probe)", probe)]


def grafana_dashboard(tenant: str, flows: list[str]) -> dict[str, Any]:
    """The tenant's dashboard: its own series only, whatever a viewer picks (see `tenant_selector`).

    The Prometheus data source is a variable: the queries, not the data source, keep tenants apart (where
    tenants may edit dashboards, give each tenant's Grafana org a data source that enforces its label).
    """
    datasource = DataSourceRef(type_val="prometheus", uid="${datasource}")
    board = (Dashboard(f"MirrorMaker 2 — {tenant}").uid(dashboard_uid(tenant)).tags(["mm2gov", tenant])
             .time("now-6h", "now").refresh("1m").readonly()
             .with_variable(DatasourceVariable("datasource").label("Prometheus").type("prometheus")
                            .allow_custom_value(False))
             .with_variable(CustomVariable(FLOW_VARIABLE).label("Flow").values(",".join(flows)).multi(True)
                            .include_all(True).all_value(flows_regex(flows)).allow_custom_value(False)
                            .current(VariableOption(selected=True, text="All", value="$__all"))))
    for row, specs in panel_specs(tenant):
        board = board.with_row(Row(row))
        for spec in specs:
            panel = (StatPanel().reduce_options(ReduceDataOptions().calcs(["lastNotNull"]))
                     if spec.kind == "stat" else TimeseriesPanel()).height(8).span(12)
            panel = panel.title(spec.title).description(spec.description).unit(spec.unit).datasource(datasource)
            for index, (legend, expr) in enumerate(spec.targets):
                panel = panel.with_target(PrometheusQuery().ref_id(chr(ord("A") + index)).expr(expr)
                                          .legend_format(legend).datasource(datasource))
            board = board.with_panel(panel)
    document: dict[str, Any] = json.loads(JSONEncoder().encode(board.build()))
    return document


def alertmanager_routes(tenants: list[str]) -> dict[str, Any]:
    """A route and Slack receiver per tenant, on the alert's tenant label (static in every generated rule)."""
    return {
        "route": {"receiver": PLATFORM_ALERT_RECEIVER, "group_by": ["tenant", "alertname", "flow"],
                  "routes": [{"matchers": [f'tenant="{t}"'], "receiver": alert_receiver(t)} for t in tenants]},
        "receivers": [{"name": PLATFORM_ALERT_RECEIVER}] + [
            {"name": alert_receiver(t), "slack_configs": [{
                "api_url_file": f"{ALERT_SECRETS_PATH}/{alert_webhook_secret(t)}/{SLACK_WEBHOOK_KEY}",
                "send_resolved": True,
                "title": f"[{t}] {{{{ .Status | toUpper }}}}: {{{{ .CommonLabels.alertname }}}}",
                "text": "{{ range .Alerts }}{{ .Annotations.summary }}\n{{ end }}"}]}
            for t in tenants],
    }


def compile_monitoring(tenancy: Tenancy, header: str) -> dict[str, str]:
    """Relative path -> file text; YAML files carry the generated-by header, JSON files a field."""
    files: dict[str, str] = {}

    def as_yaml(data: dict[str, Any]) -> str:
        return header + "\n" + yaml.dump(data, Dumper=DUMPER, sort_keys=False, allow_unicode=True)

    tenants = sorted(tenancy.tenants)
    flows = {tenant: list(label_safe(tenancy.tenants[tenant].flows)) for tenant in tenants}
    with_flows = {tenant: owned for tenant, owned in flows.items() if owned}
    for tenant in tenants:
        if flows[tenant]:
            files[f"jmx/{tenant}.yaml"] = as_yaml(jmx_exporter_config(tenant, flows[tenant]))
            files[f"prometheus/tests/{tenant}.yaml"] = as_yaml(rule_tests(tenant, with_flows))
        dashboard = {"__generated": header.lstrip("# "), **grafana_dashboard(tenant, [f.id for f in flows[tenant]])}
        files[f"grafana/{tenant}.json"] = json.dumps(dashboard, indent=1, ensure_ascii=False) + "\n"
    files["prometheus/rules.yaml"] = as_yaml({"groups": [alert_rules(t, flows[t]) for t in tenants if flows[t]]})
    files["alertmanager/routes.yaml"] = as_yaml(alertmanager_routes(tenants))
    return files
