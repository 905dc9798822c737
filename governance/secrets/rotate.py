"""`mm2gov secrets rotate`: new credentials, stored and registered, dependants rolled, old ones gone.

First, everything that can be checked without changing anything: the clients CAs, every cluster
(reached with its admin credentials), and with --kubeconfig the apiserver's dry run of each rollout.
Then, per cluster: the new SCRAM password is written to the store, then registered on the
brokers (Kafka keeps one credential per user and mechanism, so registering the new password
retires the old one at that moment); when registration fails the old secret is put back, so the
store and the brokers never disagree. New client certificates are written to the store (the
brokers trust the CA, not the certificate). Then every dependant is rolled: KafkaMirrorMaker2
objects and Deployments labelled `mm2gov.io/flow` get a new pod-template annotation, which makes
Strimzi or the Deployment controller restart them with the new Secret.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from governance.compile.desired import DesiredState
from governance.config.schema import Cluster
from governance.errors import ConfigError, RuntimeFailure
from governance.k8s.strimzi_apply import ROLLOUT_ANNOTATION, kubernetes_errors
from governance.kafka import admin as kafka_admin
from governance.kafka.apply import cluster_metadata
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
           algorithm: str = "ec", check_roll: Callable[[list[str]], object] | None = None) -> Rotation:
    """Rotate the SCRAM passwords and client certificates of `tenant`'s principals (all when None).

    Nothing changes before everything that can be checked has been: the tenant; the clients CA of every
    cluster whose certificates rotate; every cluster, reached with its admin credentials (its SCRAM users
    listed); and `check_roll(flows)`, what rolling the flows to restart will need (with --kubeconfig, the
    apiserver's dry run of each patch). A cluster that still fails (its brokers go away mid-way) gets its old
    secrets back, and the message names the clusters rotated before it."""
    if tenant is not None and tenant not in state.tenant_namespaces:
        tenants = ", ".join(sorted(state.tenant_namespaces))
        raise ConfigError(f"no tenant '{tenant}' in the repo (its tenants: {tenants})")
    chosen = {alias: mine for alias, principals in sorted(state.scram_users().items())
              if (mine := sorted(p for p in principals if tenant is None or state.principal_tenants.get(p) == tenant))}
    mm2_flows = {mm2_principal(f.flow_id): f.flow_id for f in state.flows}
    flows = list(dict.fromkeys(mm2_flows[p] for principals in chosen.values() for p in principals if p in mm2_flows))
    client_cas = {}
    for alias in chosen:
        if name := clusters[alias].security.client_ca_secret:
            client_cas[alias] = load_ca(store, name, alias)
            if client_cas[alias] is None:
                raise RuntimeFailure(f"cluster {alias}: clients CA {name!r} is missing; run `mm2gov secrets issue` "
                                     "first (nothing was rotated)")
    admins = {}
    for alias in chosen:
        cluster_metadata(alias, admin_configs[alias])  # reachable? one clear message, before any change
        admins[alias] = kafka_admin.admin_client(admin_configs[alias])
        kafka_admin.scram_users(admins[alias])  # the admin's credentials work and may see SCRAM users
    if check_roll is not None and flows:
        check_roll(flows)
    result, done = Rotation(flows=flows), []
    for alias, principals in chosen.items():
        try:
            mechanism = clusters[alias].security.sasl_mechanism or "SCRAM-SHA-512"
            result.rotated += rotate_scram(alias, "SCRAM-SHA-512" if mechanism == "PLAIN" else mechanism,
                                           principals, state.principal_tenants, store, admins[alias])
        except RuntimeFailure as exc:
            if done:
                raise RuntimeFailure(f"{exc}; already rotated: cluster(s) {', '.join(done)} (their old credentials "
                                     "no longer work): run `mm2gov secrets rotate` again") from None
            raise
        done.append(alias)
        if alias in client_cas:
            for principal in principals:
                name = tls_secret(alias, principal)
                doc = tls_doc(alias, principal, state.principal_tenants.get(principal), client_cas[alias], algorithm,
                              _generation(store, name) + 1)
                store.write(doc)
                result.rotated.append(Issued(name, "tls", doc.annotations[FINGERPRINT][7:],
                                             doc.annotations[NOT_AFTER], int(doc.annotations[GENERATION])))
    return result


def rotate_scram(alias: str, mechanism: str, principals: list[str], tenants: Mapping[str, str],
                 store: SecretStore, admin: Any) -> list[Issued]:
    """New passwords written to the store, then registered. When either fails, every secret the brokers did
    not take is put back as it was (old ones rewritten, new ones that had none removed), and those they took
    (an earlier batch, or the others of a batch the brokers answered user by user) keep their new one: the
    store and the brokers agree, user by user."""
    old: dict[str, SecretDoc] = {}  # user -> its secret before
    fresh: dict[str, str] = {}  # user -> the secret the rotation creates (the principal had none)
    new: dict[str, Any] = {}
    issued: list[Issued] = []
    registered: list[str] = []
    try:
        for principal in principals:
            name, user, tenant = scram_secret(alias, principal), user_name(principal), tenants.get(principal)
            if store.get_bytes(name, PASSWORD_KEY) is not None:
                old[user] = _old_doc(store, name, "scram", tenant, alias)
            else:
                fresh[user] = name
            password = random_password()
            doc = scram_doc(alias, principal, tenant, password, _generation(store, name) + 1)
            store.write(doc)
            new[user] = password
            issued.append(Issued(name, "scram", generation=int(doc.annotations[GENERATION])))
        kafka_admin.upsert_scram_users(admin, new, mechanism, registered=registered)
    except Exception as exc:  # noqa: BLE001 - put back what the brokers did not take, then one clear message
        reason = exc.args[0] if exc.args and isinstance(exc.args[0], str) else type(exc).__name__
        taken = set(registered)
        try:
            for user, doc in old.items():
                if user not in taken:
                    store.write(doc)
            for user, name in fresh.items():
                if user not in taken:
                    store.delete(name)
        except Exception as again:  # noqa: BLE001 - say both: the store may now disagree with the brokers
            raise RuntimeFailure(f"cluster {alias}: rotating the SCRAM credentials failed ({reason}), and putting "
                                 f"the old secrets back failed too ({type(again).__name__}): run `mm2gov secrets "
                                 "rotate` again for this cluster") from None
        kept = (f"{len(taken)} of {len(principals)} users the brokers took keep their new secrets, the others' "
                "were restored" if taken else "the old secrets were restored, nothing changed on this cluster")
        raise RuntimeFailure(f"cluster {alias}: rotating the SCRAM credentials failed ({reason}); {kept}") from None
    log.info("%s: rotated %d SCRAM credentials", alias, len(new))
    return issued


def roll_dependants(api_client: Any, state: DesiredState, clusters: dict[str, Cluster], flows: list[str],
                    generation: str, dry_run: bool = False) -> list[str]:
    """Give each flow's KafkaMirrorMaker2 (and Deployments labelled with the flow) a new pod annotation; with
    `dry_run`, have the apiserver check each patch (dryRun=All) without making it: what `rotate` asks before
    it changes anything. A refusal or an unreachable apiserver is one RuntimeFailure."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    custom, apps = client.CustomObjectsApi(api_client), client.AppsV1Api(api_client)
    options = {"dry_run": "All"} if dry_run else {}
    patch = {"spec": {"template": {"pod": {"metadata": {"annotations": {ROLLOUT_ANNOTATION: generation}}}}}}
    rolled: list[str] = []
    by_id = {f.flow_id: f for f in state.flows}
    with kubernetes_errors():
        for flow_id in flows:
            target = clusters[by_id[flow_id].target]
            if target.strimzi is None:
                continue
            namespace, name = target.strimzi.namespace, mirror_maker_object(flow_id)
            try:
                custom.patch_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkamirrormaker2s",
                                                      name, patch, **options)
                rolled.append(f"KafkaMirrorMaker2 {namespace}/{name}")
            except ApiException as exc:
                if exc.status != 404:
                    raise RuntimeFailure(f"kubernetes: cannot roll KafkaMirrorMaker2 {namespace}/{name}: "
                                         f"{exc.status} {exc.reason}") from None
            deployments = apps.list_namespaced_deployment(namespace, label_selector=f"mm2gov.io/flow={name}")
            for deployment in deployments.items:
                apps.patch_namespaced_deployment(deployment.metadata.name, namespace, {"spec": {"template": {
                    "metadata": {"annotations": {ROLLOUT_ANNOTATION: generation}}}}}, **options)
                rolled.append(f"Deployment {namespace}/{deployment.metadata.name}")
    return rolled
