"""`mm2gov secrets rotate`: new credentials, stored and registered, dependants rolled, old ones gone.

First, everything that can be checked without changing anything: the tenant, the clients CAs, the
secrets it reads, every cluster (reached with its admin credentials, which must be allowed to ALTER
it), and with --kubeconfig the apiserver's dry run of each rollout. Then, per cluster: the new SCRAM
password is written to the store, then registered on the brokers (Kafka keeps one credential per user
and mechanism, so registering the new password retires the old one at that moment); a user the
brokers did not take gets its old secret back, so the store and the brokers agree user by user (a
user whose answer never came is named: unknown). New client certificates are written to the store (the
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
from governance.kafka.apply import cluster_metadata, scram_mechanism
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


def check_tenant(state: DesiredState, tenant: str | None) -> None:
    """An unknown --tenant is bad usage (exit 2), said before anything is read from the store or a cluster."""
    if tenant is not None and tenant not in state.tenant_namespaces:
        tenants = ", ".join(sorted(state.tenant_namespaces))
        raise ConfigError(f"no tenant '{tenant}' in the repo (its tenants: {tenants})")


def rotate(state: DesiredState, clusters: dict[str, Cluster], store: SecretStore,
           admin_configs: dict[str, dict[str, Any]], tenant: str | None = None,
           algorithm: str = "ec", check_roll: Callable[[list[str]], object] | None = None) -> Rotation:
    """Rotate the SCRAM passwords and client certificates of `tenant`'s principals (all when None).

    Nothing changes before everything that can be checked has been: the tenant; the clients CA of every
    cluster whose certificates rotate; every secret the rotation reads; every cluster, reached with its admin
    credentials and asked whether the admin may ALTER it (what registering SCRAM passwords takes); and
    `check_roll(flows)`, what rolling the flows to restart will need (with --kubeconfig, the apiserver's dry
    run of each patch). A cluster that still fails (its brokers go away mid-way) gets its old
    secrets back, and the message names the clusters rotated before it."""
    check_tenant(state, tenant)
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
    for alias, principals in chosen.items():  # every secret the rotation reads can be read (a damaged store)
        for principal in principals:
            store.get_bytes(scram_secret(alias, principal), PASSWORD_KEY)
            store.annotations(scram_secret(alias, principal))
            if alias in client_cas:
                store.annotations(tls_secret(alias, principal))
    admins = {}
    for alias in chosen:
        cluster_metadata(alias, admin_configs[alias])  # reachable? one clear message, before any change
        admins[alias] = kafka_admin.admin_client(admin_configs[alias])
        kafka_admin.check_alter(alias, kafka_admin.cluster_operations(admins[alias]), "registering SCRAM passwords")
    if check_roll is not None and flows:
        check_roll(flows)
    result, done = Rotation(flows=flows), []
    for alias, principals in chosen.items():
        try:
            result.rotated += rotate_scram(alias, scram_mechanism(clusters[alias]), principals,
                                           state.principal_tenants, store, admins[alias])
            done.append(alias)  # its old SCRAM passwords no longer work
            for principal in principals if alias in client_cas else ():
                name = tls_secret(alias, principal)
                doc = tls_doc(alias, principal, state.principal_tenants.get(principal), client_cas[alias], algorithm,
                              _generation(store, name) + 1)
                store.write(doc)
                result.rotated.append(Issued(name, "tls", doc.annotations[FINGERPRINT][7:],
                                             doc.annotations[NOT_AFTER], int(doc.annotations[GENERATION])))
        except RuntimeFailure as exc:
            if done:
                raise RuntimeFailure(f"{exc}; already rotated: cluster(s) {', '.join(done)} (their old SCRAM "
                                     "passwords no longer work): run `mm2gov secrets rotate` again") from None
            raise
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
    unanswered: list[str] = []
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
        kafka_admin.upsert_scram_users(admin, new, mechanism, registered=registered, unanswered=unanswered)
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
                "were restored" if taken else "the old secrets were restored")
        if unanswered:  # the brokers may hold the new password: the old one in the store may no longer work
            kept += (f"; {len(unanswered)} user(s) got no answer ({', '.join(sorted(unanswered)[:3])}...): their "
                     "old secrets may no longer work, run `mm2gov secrets rotate` again")
        elif not taken:
            kept += ", nothing changed on this cluster"
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
