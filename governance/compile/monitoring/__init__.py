"""Per-tenant monitoring of MM2's own metrics: each line of business sees, and is alerted on, its own
flows and nobody else's.

- `jmx/<tenant>.yaml`: Prometheus JMX exporter config for the tenant's MM2s (one MM2 process per flow).
  One rule set per flow, matching that flow's source and target cluster aliases literally; every series
  gets the tenant and the flow id (names.flow_id, via the OPA scope) as static labels, never labels built
  from what the MBean says, so no topic, group or alias a tenant chooses can make a series claim another
  tenant or flow. Series: MirrorSourceConnector's per-partition replication metrics, and the flow's
  Connect worker in its group (`connect-coordinator-metrics` of client `<source>-><target>`), which exists
  whenever the flow's MM2 runs, with or without topics to replicate;
- `prometheus/rules/<tenant>.yaml`: the tenant's alert rules (one group), one rule per flow and alert, each
  selecting its tenant's and flow's series by exact labels and labelling its alert with them (static labels);
- `prometheus/tests/<tenant>.yaml`: `promtool test rules` unit tests of the tenant's alerts, with a bounded
  set of other tenants' rules and series (its look-alikes and a fixed sample) and series forged to carry the
  tenant's flow id next to them;
- `grafana/<tenant>.json`: a dashboard per tenant;
- `alertmanager/routes.yaml`: a route and receiver per tenant, matching on the alert's tenant label; the
  Slack webhook URL is read from a mounted Secret (`api_url_file`), never written here.

The probe's end-to-end alerts (latency over the tenant's SLO, loss, duplicates) come with `mm2gov probe`.

One module per artefact (jmx, rules, rule_tests, dashboards, routes) on what they share (common); this
package's names are theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import yaml

from governance.compile.monitoring.common import (
    ALERT_SECRETS_PATH,
    LATENCY_METRIC,
    PROBE_METRIC,
    RECORD_AGE_METRIC,
    WORKER_METRIC,
    label_safe,
    probed,
    promql_string,
)
from governance.compile.monitoring.dashboards import (
    FLOW_VARIABLE,
    RATE_INTERVAL,
    flows_regex,
    grafana_dashboard,
    regex_literal,
)
from governance.compile.monitoring.jmx import jmx_exporter_config, source_pattern, worker_pattern
from governance.compile.monitoring.routes import alertmanager_routes
from governance.compile.monitoring.rule_tests import Neighbours, rule_tests
from governance.compile.monitoring.rules import RuleFile, alert_rules, rules_file
from governance.files import YAML_DUMPER, Render, indented_json
from governance.model.tenancy import Flow, Tenancy

__all__ = [
    "ALERT_SECRETS_PATH", "FLOW_VARIABLE", "LATENCY_METRIC", "PROBE_METRIC", "RATE_INTERVAL",
    "RECORD_AGE_METRIC", "WORKER_METRIC", "alert_rules", "alertmanager_routes", "compile_monitoring", "flows_regex",
    "grafana_dashboard", "jmx_exporter_config", "label_safe", "monitoring_files", "probed", "promql_string",
    "regex_literal", "rule_tests", "rules_file", "source_pattern", "worker_pattern",
]


def monitoring_files(tenancy: Tenancy, header: str) -> dict[str, Render]:
    """Relative path -> how to render its text; YAML files carry the generated-by header, JSON files a field.

    Every file is one tenant's, but the Alertmanager routes, and costs the same whatever the number of
    tenants (the rule tests read a bounded set of other tenants: rule_tests.Neighbours). Only the paths and
    what each file reads are computed here; `generate` renders and writes the files in its forked workers
    (compile.write), so no text crosses a pipe.
    """
    tenants = sorted(tenancy.tenants)
    flows = {tenant: list(label_safe(tenancy.tenants[tenant].flows)) for tenant in tenants}
    neighbours = Neighbours(tenant for tenant in tenants if flows[tenant])
    files: dict[str, Render] = {}
    for tenant in tenants:
        owned = flows[tenant]
        if owned:
            loaded = {owner: flows[owner] for owner in [tenant, *neighbours.of(tenant)]}
            files[f"jmx/{tenant}.yaml"] = partial(_yaml, header, jmx_exporter_config, tenant, owned)
            files[f"prometheus/{rules_file(tenant)}"] = partial(_yaml, header, _rule_groups, tenant, owned)
            files[f"prometheus/tests/{tenant}.yaml"] = partial(_yaml, header, rule_tests, tenant, loaded)
        files[f"grafana/{tenant}.json"] = partial(_dashboard, header, tenant, [f.id for f in owned])
    files["alertmanager/routes.yaml"] = partial(_yaml, header, alertmanager_routes, tenants)
    return files


def compile_monitoring(tenancy: Tenancy, header: str) -> dict[str, str]:
    """Relative path -> file text (monitoring_files, rendered here)."""
    return {path: render() for path, render in monitoring_files(tenancy, header).items()}


def _yaml(header: str, build: Callable[..., object], *args: object) -> str:
    return header + "\n" + yaml.dump(build(*args), Dumper=YAML_DUMPER, sort_keys=False, allow_unicode=True)


def _rule_groups(tenant: str, flows: list[Flow]) -> RuleFile:
    return {"groups": [alert_rules(tenant, flows)]}


def _dashboard(header: str, tenant: str, flow_ids: list[str]) -> str:
    return indented_json({"__generated": header.lstrip("# "), **grafana_dashboard(tenant, flow_ids)}, indent=1) + "\n"
