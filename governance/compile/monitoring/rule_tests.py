"""`prometheus/tests/<tenant>.yaml`: promtool unit tests of a tenant's alerts among other tenants' series.

Which other tenants: a bounded set (`Neighbours`), so one tenant's tests are the same size whatever the size of
the estate, and generating them all stays linear in it. Every rule loaded in a test needs its flows' series
(an absent series fires MM2FlowDown), so a test that loaded every tenant's rules would carry every flow's
series: the estate's size in each tenant's file, its square in all of them.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Iterable
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
from governance.compile.monitoring.rules import Alert, flow_alerts, probe_alerts, rules_file
from governance.model.tenancy import Flow

ANCESTORS = 2  # the longest other tenant names that are a leading part of the tenant's name
DESCENDANTS = 2  # the first other tenant names, in sorted order, that start with the tenant's name
SAMPLE = 2  # other tenants from a fixed sample, beside the look-alikes
MAX_OTHERS = ANCESTORS + DESCENDANTS + 2 + SAMPLE  # (+2: the names just before and after the tenant's)


class Neighbours:
    """The other tenants whose rules and series a tenant's tests load, from one sorted index of the names.

    What a tenant's tests prove is that its rules select its own series only and fire for its own flows only
    (the forged series carry the tenant's label with another tenant's flow id and another tenant's label with
    the tenant's flow id: a rule that stopped selecting either label fails), and that the other tenants'
    rules loaded beside them stay quiet while it is in trouble. Rules select by exact label values, so the
    other tenants whose rules or series could be confused with the tenant's are the look-alikes: names that
    are a leading part of the tenant's or start with it (a matcher turned into a prefix regex, `t1.*`, would
    take `t10`'s series; flow ids start with the tenant name and a `-`, so their look-alikes are the same
    tenants), and the names just before and after it in sorted order (the longest leading part in common).
    SAMPLE more tenants from a fixed sample (the smallest hashes) stand for everyone else. So two to six
    look-alikes (two, the sorted neighbours, in most estates) and two others: at most MAX_OTHERS, and all
    the other tenants when there are no more, so a small estate's tests hold every tenant, as they always did.

    Each tenant costs a binary search and one set lookup per leading part of its name; nothing compares
    every two tenants. Adding a tenant changes its look-alikes' tests only (and every tenant's in the rare
    case, about two in N, that its name hashes into the sample).
    """

    def __init__(self, tenants: Iterable[str]) -> None:
        self.names = sorted(tenants)
        self.known = frozenset(self.names)
        self.ranked = sorted(self.names, key=_rank)

    def of(self, tenant: str) -> list[str]:
        """The other tenants in `tenant`'s tests, sorted: its look-alikes and SAMPLE more, or all of them when
        there are no more than MAX_OTHERS."""
        if len(self.names) <= MAX_OTHERS + 1:
            return [name for name in self.names if name != tenant]
        at = bisect_left(self.names, tenant)
        after = at + 1 if at < len(self.names) and self.names[at] == tenant else at
        leading = (tenant[:n] for n in range(len(tenant) - 1, 0, -1))  # longest first
        ancestors = [name for name in leading if name in self.known][:ANCESTORS]
        descendants = [name for name in self.names[after:after + DESCENDANTS] if name.startswith(tenant)]
        chosen = dict.fromkeys([*self.names[max(at - 1, 0):at], *self.names[after:after + 1], *descendants,
                                *ancestors])
        wanted = len(chosen) + SAMPLE
        for name in self.ranked:  # the sample, in an order that is the same for every tenant
            if len(chosen) >= wanted:
                break
            if name != tenant:
                chosen.setdefault(name)
        return sorted(chosen)


def _rank(tenant: str) -> bytes:
    """A stable pseudo-random order of names (the same on every run and machine), for the sample."""
    return hashlib.sha256(tenant.encode()).digest()


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
    """`promtool test rules` for the tenant's alerts, the rules of the tenants of `flows_by_tenant` loaded (the
    tenant and its `Neighbours`; alert names are shared, so each check sees every loaded rule's alerts).

    Every flow of every tenant is up, but the tenant's first flow, whose worker series ends at 10m (first
    case) or reports no task from 10m (second case): its MM2FlowDown fires by 16m (2m `for`) with its own
    labels, although a series forged with another tenant's label and this flow id stays up. The tenant's last
    flow replicates slowly and reads old records: its latency and record-age alerts fire, and nobody's fire
    for series forged with the tenant's label and another tenant's flow id, or another tenant's label and
    this tenant's flow id.
    """
    flows = flows_by_tenant[tenant]
    down, slow = flows[0], flows[-1]
    # The forged series carry another tenant's label: one whose name starts with the tenant's when there is
    # one, so a tenant matcher turned into a prefix regex takes the forged series for the tenant's own.
    others = [(t, f.id) for t in sorted(flows_by_tenant, key=lambda t: (not t.startswith(tenant), t))
              if t != tenant for f in flows_by_tenant[t]]  # a name that starts with the tenant's first
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
    return {"rule_files": [f"../{rules_file(owner)}" for owner in sorted(flows_by_tenant)],
            "evaluation_interval": "1m", "tests": tests}


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
