"""The client quotas mm2gov sets, per cluster and principal, from the resolved tenancy (docs/capacity.md).

A flow with `capacity` gets its MM2 principal's fetch quota on the source and produce quota on the target, at
its catch-up rate spread over each cluster's brokers (model/capacity.py computed both): MM2 reads its tenant's
topics on the source and writes only on the target (offset syncs, checkpoints and heartbeats included), so
those two quotas bound everything its catch-up can take. The same quotas reach the brokers (`apply`), the
Strimzi KafkaUsers (`spec.quotas`), `OUT/quotas/<cluster>.json` and admission. A tenant principal that
declares a `quota` gets it on every cluster where it has ACLs.
"""

from __future__ import annotations

from governance.model.quota import ClientQuota, ClusterQuotas
from governance.model.tenancy import Tenancy


def desired_quotas(tenancy: Tenancy) -> ClusterQuotas:
    quotas: ClusterQuotas = {}
    for tenant in tenancy:
        # a principal's own quota, where it has ACLs: its tenant's home clusters, its flows' targets (readers)
        clusters = {*tenant.clusters, *(flow.target for flow in tenant.flows)}
        for own in tenant.principals:
            if own.quota is not None:
                quota = ClientQuota(own.quota.producer_byte_rate, own.quota.consumer_byte_rate,
                                    own.quota.request_percentage)
                for alias in clusters:
                    quotas.setdefault(alias, {})[own.name] = quota
    for _, flow in tenancy.flows():
        if flow.capacity is None:
            continue
        quotas.setdefault(flow.source, {})[flow.mm2_principal] = ClientQuota(
            consumer_byte_rate=flow.capacity.source_fetch_byte_rate)
        quotas.setdefault(flow.target, {})[flow.mm2_principal] = ClientQuota(
            producer_byte_rate=flow.capacity.target_produce_byte_rate)
    return quotas
