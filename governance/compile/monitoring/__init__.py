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

import yaml

from governance.compile.fanout import fan_out
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
from governance.compile.monitoring.jmx import JmxExporterConfig, jmx_exporter_config, source_pattern, worker_pattern
from governance.compile.monitoring.routes import AlertmanagerRoutes, alertmanager_routes
from governance.compile.monitoring.rule_tests import Neighbours, RuleTestFile, rule_tests
from governance.compile.monitoring.rules import RuleFile, alert_rules, rules_file
from governance.files import YAML_DUMPER, indented_json
from governance.model.tenancy import Tenancy

__all__ = [
    "ALERT_SECRETS_PATH", "FLOW_VARIABLE", "LATENCY_METRIC", "PROBE_METRIC", "RATE_INTERVAL",
    "RECORD_AGE_METRIC", "WORKER_METRIC", "alert_rules", "alertmanager_routes", "compile_monitoring", "flows_regex",
    "grafana_dashboard", "jmx_exporter_config", "label_safe", "probed", "promql_string", "regex_literal",
    "rule_tests", "rules_file", "source_pattern", "worker_pattern",
]


def compile_monitoring(tenancy: Tenancy, header: str) -> dict[str, str]:
    """Relative path -> file text; YAML files carry the generated-by header, JSON files a field.

    Every file is one tenant's, but the Alertmanager routes, and costs the same whatever the number of
    tenants (the rule tests read a bounded set of other tenants: rule_tests.Neighbours).
    """
    def as_yaml(data: JmxExporterConfig | RuleTestFile | RuleFile | AlertmanagerRoutes) -> str:
        return header + "\n" + yaml.dump(data, Dumper=YAML_DUMPER, sort_keys=False, allow_unicode=True)

    tenants = sorted(tenancy.tenants)
    flows = {tenant: list(label_safe(tenancy.tenants[tenant].flows)) for tenant in tenants}
    neighbours = Neighbours(tenant for tenant in tenants if flows[tenant])

    def tenant_files(tenant: str) -> list[tuple[str, str]]:
        files, owned = [], flows[tenant]
        if owned:
            files.append((f"jmx/{tenant}.yaml", as_yaml(jmx_exporter_config(tenant, owned))))
            files.append((f"prometheus/{rules_file(tenant)}", as_yaml({"groups": [alert_rules(tenant, owned)]})))
            loaded = {owner: flows[owner] for owner in [tenant, *neighbours.of(tenant)]}
            files.append((f"prometheus/tests/{tenant}.yaml", as_yaml(rule_tests(tenant, loaded))))
        dashboard = {"__generated": header.lstrip("# "), **grafana_dashboard(tenant, [f.id for f in flows[tenant]])}
        files.append((f"grafana/{tenant}.json", indented_json(dashboard, indent=1) + "\n"))
        return files

    files = {path: text for rendered in fan_out(tenant_files, tenants) for path, text in rendered}
    files["alertmanager/routes.yaml"] = as_yaml(alertmanager_routes(tenants))
    return files
