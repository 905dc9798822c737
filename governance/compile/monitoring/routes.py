"""`alertmanager/routes.yaml`: a route and receiver per tenant, the webhook URL read from a mounted Secret."""

from __future__ import annotations

from typing import Any

from governance.compile.monitoring.common import (
    ALERT_SECRETS_PATH,
    SLACK_WEBHOOK_KEY,
)
from governance.model.names import PLATFORM_ALERT_RECEIVER, alert_receiver, alert_webhook_secret


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
