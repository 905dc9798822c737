"""What every monitoring artefact shares: metric names, thresholds, label-value rules."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from governance.model.tenancy import Flow

METRIC_PREFIX = "kafka_connect_mirror_source_connector_"
WORKER_METRIC = "kafka_connect_worker_assigned_tasks"  # the flow's Connect worker: its tasks in the group
LATENCY_METRIC = METRIC_PREFIX + "replication_latency_ms_max"
RECORD_AGE_METRIC = METRIC_PREFIX + "record_age_ms_max"
LATENCY_THRESHOLD_MS = 60_000
RECORD_AGE_THRESHOLD_MS = 300_000
ALERT_SECRETS_PATH = "/etc/alertmanager/secrets"  # where each tenant's webhook Secret is mounted
SLACK_WEBHOOK_KEY = "slack-webhook-url"
# label values mm2gov writes into PromQL string literals (escaped anyway): ids and aliases are DNS-label-like
SAFE_LABEL_VALUE = re.compile(r"^[a-z0-9-]+$")
PROBE_METRIC = "mm2gov_probe_"  # what `mm2gov probe --serve` exports (governance/probe/serve.py), per tenant and flow



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
