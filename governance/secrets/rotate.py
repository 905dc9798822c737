"""`mm2gov secrets rotate`: new credentials, stored and registered, dependants rolled, old ones gone.

Order, per cluster: the new SCRAM password is written to the store, then registered on the
brokers (Kafka keeps one credential per user and mechanism, so registering the new password
retires the old one at that moment); when registration fails the old secret is put back, so the
store and the brokers never disagree. New client certificates are written to the store (the
brokers trust the CA, not the certificate). Then every dependant is rolled: KafkaMirrorMaker2
objects and Deployments labelled `mm2gov.io/flow` get a new pod-template annotation, which makes
Strimzi or the Deployment controller restart them with the new Secret.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from governance.compile.desired import DesiredState
from governance.config.schema import Cluster
from governance.errors import RuntimeFailure
from governance.k8s.strimzi_apply import ROLLOUT_ANNOTATION
from governance.kafka import admin as kafka_admin
from governance.model.names import mirror_maker_object, mm2_principal
from governance.secrets.issue import FINGERPRINT, GENERATION, NOT_AFTER, Issued, load_ca, scram_doc, tls_doc
from governance.secrets.names import PASSWORD_KEY, scram_secret, tls_secret, user_name
from governance.secrets.store import SecretDoc, SecretStore
from governance.secrets.values import random_password

log = logging.getLogger("mm2gov.secrets")


@dataclass
class Rotation:
    rotated: list[Issued] = field(default_factory=list)
    flows: list[str] = field(default_factory=list)  # flows whose MM2 must restart with the new Secret
    rolled: list[str] = field(default_factory=list)  # Kubernetes objects given a new pod-template annotation

    def to_record(self) -> dict[str, Any]:
        return {"rotated": [r.to_record() for r in self.rotated], "restart_flows": self.flows,
                "rolled": self.rolled}


def _generation(store: SecretStore, name: str) -> int:
    return int((store.annotations(name) or {}).get(GENERATION, "1"))


def _old_doc(store: SecretStore, name: str, kind: str, tenant: str | None, cluster: str) -> SecretDoc:
    return SecretDoc(name, kind, store.data(name) or {}, tenant=tenant, cluster=cluster,
                     annotations=store.annotations(name) or {})


def rotate(state: DesiredState, clusters: dict[str, Cluster], store: SecretStore,
           admin_configs: dict[str, dict[str, Any]], tenant: str | None = None,
           algorithm: str = "ec") -> Rotation:
    """Rotate the SCRAM passwords and client certificates of `tenant`'s principals (all when None)."""
    if tenant is not None and tenant not in state.tenant_namespaces:
        raise RuntimeFailure(f"unknown tenant {tenant!r} (tenants: {', '.join(sorted(state.tenant_namespaces))})")
    result = Rotation()
    mm2_flows = {mm2_principal(f.flow_id): f.flow_id for f in state.flows}
    for alias, principals in sorted(state.scram_users().items()):
        chosen = sorted(p for p in principals if tenant is None or state.principal_tenants.get(p) == tenant)
        if not chosen:
            continue
        _rotate_scram(alias, clusters[alias], chosen, state, store, admin_configs[alias], result)
        client_ca_name = clusters[alias].security.client_ca_secret
        if client_ca_name:
            client_ca = load_ca(store, client_ca_name, alias)
            if client_ca is None:
                raise RuntimeFailure(f"cluster {alias}: clients CA {client_ca_name!r} is missing; "
                                     "run `mm2gov secrets issue` first")
            for principal in chosen:
                name = tls_secret(alias, principal)
                doc = tls_doc(alias, principal, state.principal_tenants.get(principal), client_ca, algorithm,
                              _generation(store, name) + 1)
                store.write(doc)
                result.rotated.append(Issued(name, "tls", doc.annotations[FINGERPRINT][7:],
                                             doc.annotations[NOT_AFTER], int(doc.annotations[GENERATION])))
        result.flows += [mm2_flows[p] for p in chosen if p in mm2_flows and mm2_flows[p] not in result.flows]
    return result


def _rotate_scram(alias: str, cluster: Cluster, principals: list[str], state: DesiredState, store: SecretStore,
                  admin_config: dict[str, Any], result: Rotation) -> None:
    mechanism = cluster.security.sasl_mechanism or "SCRAM-SHA-512"
    if mechanism == "PLAIN":
        mechanism = "SCRAM-SHA-512"
    old: list[SecretDoc] = []
    new: dict[str, Any] = {}
    for principal in principals:
        name = scram_secret(alias, principal)
        tenant = state.principal_tenants.get(principal)
        if store.get_bytes(name, PASSWORD_KEY) is not None:
            old.append(_old_doc(store, name, "scram", tenant, alias))
        password = random_password()
        doc = scram_doc(alias, principal, tenant, password, _generation(store, name) + 1)
        store.write(doc)
        new[user_name(principal)] = password
        result.rotated.append(Issued(name, "scram", generation=int(doc.annotations[GENERATION])))
    try:
        kafka_admin.upsert_scram_users(kafka_admin.admin_client(admin_config), new, mechanism)
    except Exception as exc:  # noqa: BLE001 - put the old secrets back, then one clear message
        for doc in old:
            store.write(doc)
        reason = exc.args[0] if exc.args and isinstance(exc.args[0], str) else type(exc).__name__
        raise RuntimeFailure(f"cluster {alias}: registering the new SCRAM credentials failed ({reason}); "
                             "the old secrets were restored, nothing changed on this cluster") from None
    log.info("%s: rotated %d SCRAM credentials", alias, len(new))


def roll_dependants(api_client: Any, state: DesiredState, clusters: dict[str, Cluster], flows: list[str],
                    generation: str) -> list[str]:
    """Give each flow's KafkaMirrorMaker2 (and Deployments labelled with the flow) a new pod annotation."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    custom, apps = client.CustomObjectsApi(api_client), client.AppsV1Api(api_client)
    patch = {"spec": {"template": {"pod": {"metadata": {"annotations": {ROLLOUT_ANNOTATION: generation}}}}}}
    rolled: list[str] = []
    by_id = {f.flow_id: f for f in state.flows}
    for flow_id in flows:
        target = clusters[by_id[flow_id].target]
        if target.strimzi is None:
            continue
        namespace, name = target.strimzi.namespace, mirror_maker_object(flow_id)
        try:
            custom.patch_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkamirrormaker2s",
                                                  name, patch)
            rolled.append(f"KafkaMirrorMaker2 {namespace}/{name}")
        except ApiException as exc:
            if exc.status != 404:
                raise RuntimeFailure(f"kubernetes: cannot roll KafkaMirrorMaker2 {namespace}/{name}: "
                                     f"{exc.status} {exc.reason}") from None
        deployments = apps.list_namespaced_deployment(namespace, label_selector=f"mm2gov.io/flow={name}")
        for deployment in deployments.items:
            apps.patch_namespaced_deployment(deployment.metadata.name, namespace, {"spec": {"template": {
                "metadata": {"annotations": {ROLLOUT_ANNOTATION: generation}}}}})
            rolled.append(f"Deployment {namespace}/{deployment.metadata.name}")
    return rolled
