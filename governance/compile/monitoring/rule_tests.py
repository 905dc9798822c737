"""`prometheus/tests/<tenant>.yaml`: promtool unit tests of a tenant's alerts among other tenants' series."""

from __future__ import annotations

from typing import TypedDict

from governance.compile.monitoring.common import (
    LATENCY_METRIC,
    LATENCY_THRESHOLD_MS,
    PROBE_METRIC,
    RECORD_AGE_METRIC,
    RECORD_AGE_THRESHOLD_MS,
    WORKER_METRIC,
    probed,
)
from governance.compile.monitoring.rules import Alert, flow_alerts, probe_alerts
from governance.model.tenancy import Flow


class InputSeries(TypedDict):
    series: str  # a metric and its labels, in PromQL's notation
    values: str  # promtool's expanding notation (`2x30`, `0+60x30`, `stale`)


class ExpectedAlert(TypedDict):
    exp_labels: dict[str, str]
    exp_annotations: dict[str, str]


class AlertTestCase(TypedDict):
    eval_time: str
    alertname: str
    exp_alerts: list[ExpectedAlert]


class RuleTest(TypedDict):
    name: str
    interval: str
    input_series: list[InputSeries]
    alert_rule_test: list[AlertTestCase]


class RuleTestFile(TypedDict):
    """`prometheus/tests/<tenant>.yaml`: what `promtool test rules` reads."""

    rule_files: list[str]
    evaluation_interval: str
    tests: list[RuleTest]


def _series(metric: str, labels: dict[str, str]) -> str:
    return metric + "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _expected(alerts: list[Alert]) -> list[ExpectedAlert]:
    return [{"exp_labels": a.labels, "exp_annotations": a.annotations} for a in alerts]


def rule_tests(tenant: str, flows_by_tenant: dict[str, list[Flow]]) -> RuleTestFile:
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

    def workers(down_values: str) -> list[InputSeries]:
        series: list[InputSeries] = [{"series": _series(WORKER_METRIC, {"tenant": owner, "flow": flow.id}),
                   "values": down_values if (owner, flow) == (tenant, down) else "2x30"}
                  for owner, owned in sorted(flows_by_tenant.items()) for flow in owned]
        return [*series, {"series": _series(WORKER_METRIC, {"tenant": neighbour, "flow": down.id}), "values": "2x30"}]

    replication: list[InputSeries] = []
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
    checks: list[AlertTestCase] = [
        {"eval_time": "5m", "alertname": "MM2FlowDown", "exp_alerts": []},
        {"eval_time": "9m", "alertname": "MM2ReplicationLatencyHigh", "exp_alerts": []},
        {"eval_time": "16m", "alertname": "MM2FlowDown", "exp_alerts": flow_down},
        {"eval_time": "16m", "alertname": "MM2ReplicationLatencyHigh",
         "exp_alerts": _expected([slow_alerts["MM2ReplicationLatencyHigh"]])},
        {"eval_time": "14m", "alertname": "MM2RecordAgeHigh", "exp_alerts": []},
        {"eval_time": "16m", "alertname": "MM2RecordAgeHigh",
         "exp_alerts": _expected([slow_alerts["MM2RecordAgeHigh"]])},
    ]
    no_tasks: list[AlertTestCase] = [{"eval_time": "5m", "alertname": "MM2FlowDown", "exp_alerts": []},
                                     {"eval_time": "16m", "alertname": "MM2FlowDown", "exp_alerts": flow_down}]
    tests: list[RuleTest] = [
        {"name": f"{tenant}: its flows alert, forged and other tenants' series do not", "interval": "1m",
         "input_series": workers("2x9 stale") + replication, "alert_rule_test": checks},
        {"name": f"{tenant}: a flow whose workers hold no task is down", "interval": "1m",
         "input_series": workers("2x9 0x20"), "alert_rule_test": no_tasks},
    ]
    if measured := [f for f in flows if probed(f)]:
        tests.append(_probe_rule_test(tenant, measured[0], flows_by_tenant, neighbour, neighbour_flow))
    return {"rule_files": ["../rules.yaml"], "evaluation_interval": "1m", "tests": tests}


def _probe_rule_test(tenant: str, bad: Flow, flows_by_tenant: dict[str, list[Flow]], neighbour: str,
                     neighbour_flow: str) -> RuleTest:
    """Every probed flow of every tenant is probed healthily, but `bad`: from 10m its probe loses canaries and
    its p99 is over its SLO; its alerts fire with its labels, nobody's for forged series of either label."""
    def series(metric: str, owner: str, flow_id: str, values: str) -> InputSeries:
        return {"series": _series(PROBE_METRIC + metric, {"tenant": owner, "flow": flow_id}), "values": values}

    inputs: list[InputSeries] = []
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
