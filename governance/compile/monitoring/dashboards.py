"""`grafana/<tenant>.json`: one dashboard per tenant, every query selecting its tenant and flows."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import TypeAlias

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

from governance.compile.monitoring.common import (
    METRIC_PREFIX,
    PROBE_METRIC,
    WORKER_METRIC,
    promql_string,
)
from governance.model.names import dashboard_uid

# -- dashboards ------------------------------------------------------------------------------------------------
# Built with Grafana's own grafana-foundation-sdk (Grafana Labs, Apache-2.0, typed builders generated from
# Grafana's schemas, released with Grafana) rather than grafanalib (community-kept, no release since 2024).
# The classic dashboard JSON model: what file provisioning and /api/dashboards/db import on every Grafana
# in use (the SDK's v2 model needs Grafana 12's v2 dashboard API).

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


# The dashboard document is the SDK's JSON encoding of its typed Dashboard model (its panels, variables, field
# configs, grid positions...): open-ended JSON to mm2gov, which writes it as is and reads nothing back from it,
# so it is typed as JSON rather than as a copy of Grafana's schema (PanelSpec below is mm2gov's own part).
JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"


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


def grafana_dashboard(tenant: str, flows: list[str]) -> JsonObject:
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
    document: JsonObject = json.loads(JSONEncoder().encode(board.build()))
    return document
