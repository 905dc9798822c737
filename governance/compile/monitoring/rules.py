"""`prometheus/rules/<tenant>.yaml`: the tenant's alert group, each rule selecting its own tenant's and flow's series.

One file per tenant rather than one for the estate: a tenant's promtool tests load its own rules and a bounded
set of other tenants' (rule_tests.py), so they stay the same size however many tenants there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from governance.compile.monitoring.common import (
    LATENCY_METRIC,
    LATENCY_THRESHOLD_MS,
    PROBE_METRIC,
    RECORD_AGE_METRIC,
    RECORD_AGE_THRESHOLD_MS,
    WORKER_METRIC,
    probed,
    promql_string,
)
from governance.model.tenancy import Flow

# One Prometheus alerting rule as a rules file holds it (`for` is a Python keyword: the functional form)
AlertRule = TypedDict("AlertRule", {
    "alert": str, "expr": str, "for": str, "labels": dict[str, str], "annotations": dict[str, str]})


class RuleGroup(TypedDict):
    name: str
    rules: list[AlertRule]


class RuleFile(TypedDict):
    """`prometheus/rules/<tenant>.yaml`: the tenant's group."""

    groups: list[RuleGroup]


def rules_file(tenant: str) -> str:
    """Where the tenant's rules are, under OUT/monitoring/prometheus (Prometheus loads `rules/*.yaml`)."""
    return f"rules/{tenant}.yaml"


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

    def rule(self) -> AlertRule:
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


def alert_rules(tenant: str, flows: list[Flow]) -> RuleGroup:
    """The tenant's alert group (its flows' series only)."""
    alerts = [a for f in flows for a in flow_alerts(tenant, f) + (probe_alerts(tenant, f) if probed(f) else [])]
    return {"name": f"mm2gov-{tenant}", "rules": [a.rule() for a in alerts]}
