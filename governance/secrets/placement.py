"""Which Kubernetes namespaces each secret goes to: next to whoever reads it, nowhere else.

- a principal's credentials (`scram-…`, `tls-…`): its tenant's namespace (the tenant's
  workloads mount them; RBAC from `k8s/tenant` lets only that tenant read there), plus the
  Strimzi namespace of the cluster (the KafkaUser references it) and, for an MM2
  principal, the Strimzi namespace where its KafkaMirrorMaker2 runs;
- a cluster CA's public part: every namespace that holds a credential for that cluster;
- CA keys and admin credentials: the system namespace only.
"""

from __future__ import annotations

from dataclasses import dataclass

from governance.compile.desired import DesiredState
from governance.config.schema import Cluster
from governance.model.names import SYSTEM_NAMESPACE, mm2_principal, scram_secret, tls_secret


@dataclass(frozen=True)
class Placement:
    namespaces_by_secret: dict[str, tuple[str, ...]]
    system_namespace: str = SYSTEM_NAMESPACE

    def tenant_secrets(self, state: DesiredState) -> dict[str, list[str]]:
        """tenant -> the Secrets placed in its namespace (what its Role may read), sorted. One pass over the
        secrets, by namespace (not one per tenant)."""
        by_namespace: dict[str, list[str]] = {}
        for name, homes in self.namespaces_by_secret.items():
            for namespace in homes:
                by_namespace.setdefault(namespace, []).append(name)
        return {tenant: sorted(by_namespace.get(namespace, ()))
                for tenant, namespace in state.tenant_namespaces.items()}

    def namespaces(self, name: str) -> tuple[str, ...]:
        """Where the secret is written; the first is where it is read back."""
        return self.namespaces_by_secret.get(name, (self.system_namespace,))


def _add(found: dict[str, list[str]], name: str, *namespaces: str | None) -> None:
    listed = found.setdefault(name, [])
    listed += [ns for ns in namespaces if ns and ns not in listed]


def placement(state: DesiredState, clusters: dict[str, Cluster],
              system_namespace: str = SYSTEM_NAMESPACE) -> Placement:
    flow_targets = {mm2_principal(f.flow_id): f.target for f in state.flows}
    found: dict[str, list[str]] = {}
    for alias, principals in sorted(state.scram_users().items()):
        cluster = clusters[alias]
        strimzi_ns = cluster.strimzi.namespace if cluster.strimzi else None
        for principal in sorted(principals):
            tenant = state.principal_tenants.get(principal)
            target = flow_targets.get(principal)
            mm2_ns = clusters[target].strimzi.namespace if target and clusters[target].strimzi else None
            homes = (state.tenant_namespaces.get(tenant, tenant) if tenant else system_namespace, strimzi_ns, mm2_ns)
            names = [scram_secret(alias, principal)]
            if cluster.security.client_ca_secret:
                names.append(tls_secret(alias, principal))
            for name in names:
                _add(found, name, *homes)
                if cluster.security.ca_secret:
                    _add(found, cluster.security.ca_secret, system_namespace, *homes)
    for cluster in clusters.values():
        if cluster.security.ca_secret:
            _add(found, cluster.security.ca_secret, system_namespace)
    return Placement({name: tuple(ns) for name, ns in found.items()}, system_namespace)
