"""`alertmanager/routes.yaml`: a route and receiver per tenant, the webhook URL read from a mounted Secret."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from governance.compile.monitoring.common import (
    ALERT_SECRETS_PATH,
    SLACK_WEBHOOK_KEY,
)
from governance.model.names import PLATFORM_ALERT_RECEIVER, alert_receiver, alert_webhook_secret


class Route(TypedDict):
    matchers: list[str]
    receiver: str


class RootRoute(TypedDict):
    receiver: str
    group_by: list[str]
    routes: list[Route]


class SlackConfig(TypedDict):
    api_url_file: str  # the mounted Secret's file: the webhook URL is never written here
    send_resolved: bool
    title: str
    text: str


class Receiver(TypedDict):
    name: str
    slack_configs: NotRequired[list[SlackConfig]]  # none for the platform's own receiver


class AlertmanagerRoutes(TypedDict):
    """`alertmanager/routes.yaml`: Alertmanager's `route` and `receivers`."""

    route: RootRoute
    receivers: list[Receiver]


def alertmanager_routes(tenants: list[str]) -> AlertmanagerRoutes:
    """A route and Slack receiver per tenant, on the alert's tenant label (static in every generated rule)."""
    return {
        "route": {"receiver": PLATFORM_ALERT_RECEIVER, "group_by": ["tenant", "alertname", "flow"],
                  "routes": [{"matchers": [f'tenant="{t}"'], "receiver": alert_receiver(t)} for t in tenants]},
        "receivers": [{"name": PLATFORM_ALERT_RECEIVER}, *(_slack_receiver(t) for t in tenants)],
    }


def _slack_receiver(tenant: str) -> Receiver:
    return {"name": alert_receiver(tenant), "slack_configs": [{
        "api_url_file": f"{ALERT_SECRETS_PATH}/{alert_webhook_secret(tenant)}/{SLACK_WEBHOOK_KEY}",
        "send_resolved": True,
        "title": f"[{tenant}] {{{{ .Status | toUpper }}}}: {{{{ .CommonLabels.alertname }}}}",
        "text": "{{ range .Alerts }}{{ .Annotations.summary }}\n{{ end }}"}]}
