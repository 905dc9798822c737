"""The admission fuzz: start from every object mm2gov puts into Kubernetes for examples/acme (all
admitted), mutate every field that routes data or credentials, and send the mutants through the
real webhook's HTTPS endpoint (its own process, its own OPA, namespaces watched on the stack's
kube-apiserver). No mutant may crash it, and none may be allowed unless it stays in scope.

"In scope" is decided here, independently of the Rego rules, from what mm2gov itself generated
(the base objects) and from Kafka's own code (the Java oracle):

- a KafkaMirrorMaker2 must be one of its tenant's generated MirrorMaker 2s up to fields that do
  not route (replicas, resources, ...): same clusters, bootstrap servers (as Kafka's LIST reads
  them), authentication, Secrets, TLS, Connect names, connector settings, pod template; and each
  topic/group pattern, as MM2's own filter (DefaultTopicFilter/DefaultGroupFilter, asked through
  the oracle) reads it, may match no candidate name outside the tenant's prefixes;
- a KafkaUser must be a user of its tenant with ACLs inside that user's generated ACLs, its
  password from that user's own Secrets, and, for a restricted tenant, on a non-cloud cluster;
- a KafkaTopic's topic must be under its tenant's names (restricted: not on a cloud cluster);
- a Secret must be one of its tenant's credentials, or a cluster CA certificate;
- the tenant is its namespace's label as the API server has it, or in a Strimzi namespace the
  owner of what the object is, per the generated objects; the object's label may only repeat it.

At least 10,000 mutants per run (MM2GOV_FUZZ_MUTANTS), seed MM2GOV_FUZZ_SEED (printed).
"""

from __future__ import annotations

import copy
import http.client
import json
import os
import random
import shutil
import ssl
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from devstack.files import write_private
from devstack.opa import OpaServer
from devstack.oracle import OracleError
from devstack.process import free_port
from governance.secrets.pki import issue_cert
from tests.conftest import REPO_ROOT
from tests.tools import acme_objects

MUTANTS = int(os.environ.get("MM2GOV_FUZZ_MUTANTS", "10000"))
SEED = int(os.environ.get("MM2GOV_FUZZ_SEED", "20261123"))
TENANT = "mm2gov.io/tenant"
PATTERNS = ("topicsPattern", "topicsExcludePattern", "groupsPattern", "groupsExcludePattern")
CONNECTORS = ("sourceConnector", "checkpointConnector", "heartbeatConnector")
# Fields of a KafkaMirrorMaker2 that change neither where nor as whom it connects, nor what it mirrors.
BENIGN_SPEC = (
    "replicas",
    "version",
    "resources",
    "logging",
    "metricsConfig",
    "livenessProbe",
    "readinessProbe",
    "jmxOptions",
)
BENIGN_CONFIG = {
    "replication.factor",
    "refresh.topics.interval.seconds",
    "sync.topic.configs.enabled",
    "offset.lag.max",
    "config.storage.replication.factor",
    "offset.storage.replication.factor",
    "status.storage.replication.factor",
    "request.timeout.ms",
    "metadata.max.age.ms",
}


# ---- the webhook under test ---------------------------------------------------------------------


def _https(port: int, ca: str) -> http.client.HTTPSConnection:
    return http.client.HTTPSConnection("127.0.0.1", port, context=ssl.create_default_context(cafile=ca), timeout=20)


@pytest.fixture(scope="module")
def fuzz_webhook(stack, tmp_path_factory):
    root = tmp_path_factory.mktemp("admission-fuzz")
    repo = root / "acme"
    shutil.copytree(REPO_ROOT / "examples" / "acme", repo)
    core = client.CoreV1Api(stack.kube.client())
    for name, labels in acme_objects.namespaces(repo).items():
        try:
            core.create_namespace({"metadata": {"name": name, "labels": labels}})
        except ApiException:
            core.replace_namespace(name, {"metadata": {"name": name, "labels": labels}})
    pair = issue_cert(stack.ca, "mm2gov-admission-fuzz", server=True, ip_addresses=("127.0.0.1",))
    write_private(root / "tls.crt", pair.cert_pem())
    write_private(root / "tls.key", pair.key_pem())
    opa = OpaServer(root, log_level="error")
    opa.start()
    port = free_port()
    log = (root / "webhook.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "governance",
            "--log-level",
            "warning",
            "admission",
            "serve",
            str(repo),
            "--tls-cert",
            str(root / "tls.crt"),
            "--tls-key",
            str(root / "tls.key"),
            "--port",
            str(port),
            "--opa-url",
            opa.url,
            "--kubeconfig",
            str(stack.write_kubeconfig(root / "kubeconfig")),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=REPO_ROOT,
    )
    ca = str(stack.ca_pem_path)
    deadline = time.monotonic() + 60
    while True:
        try:
            connection = _https(port, ca)
            connection.request("GET", "/readyz")
            if connection.getresponse().status == 200:
                break
        except OSError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, (root / "webhook.log").read_text()
        time.sleep(0.3)
    try:
        yield {"repo": repo, "port": port, "ca": ca, "process": process, "log": root / "webhook.log", "opa": opa}
    finally:
        process.terminate()
        process.wait(timeout=30)
        opa.stop()
        log.close()


def _post_all(port: int, ca: str, bodies: list[bytes], connections: int = 8) -> list[tuple[int, bytes]]:
    def send(indexes: list[int]) -> list[tuple[int, tuple[int, bytes]]]:
        answers = []
        connection = _https(port, ca)
        for i in indexes:
            try:
                connection.request("POST", "/validate", bodies[i], {"Content-Type": "application/json"})
                response = connection.getresponse()
                answers.append((i, (response.status, response.read())))
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = _https(port, ca)
                answers.append((i, (0, b"")))
        connection.close()
        return answers

    chunks = [list(range(len(bodies)))[k::connections] for k in range(connections)]
    answers: list[tuple[int, bytes]] = [(0, b"")] * len(bodies)
    with ThreadPoolExecutor(connections) as pool:
        for part in pool.map(send, chunks):
            for i, answer in part:
                answers[i] = answer
    return answers


# ---- what mm2gov generated: the bases, and who owns what -----------------------------------------


@dataclass
class World:
    document: dict[str, Any]
    namespaces: dict[str, dict[str, str]]
    bases: list[dict[str, Any]]
    tenants: dict[str, dict[str, Any]] = field(init=False)
    strimzi_namespaces: set[str] = field(init=False)
    base_tenant: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.tenants = self.document["tenants"]
        self.strimzi_namespaces = {
            c["strimzi_namespace"] for c in self.document["clusters"].values() if c.get("strimzi_namespace")
        }
        self.base_tenant = [self.tenant_of(b["kind"], b["metadata"]["namespace"], b) or "" for b in self.bases]

    def of_kind(self, kind: str) -> list[int]:
        return [i for i, b in enumerate(self.bases) if b["kind"] == kind]

    def topic_names(self, tenant: str) -> list[str]:
        t = self.tenants[tenant]
        return [
            *t["topic_prefixes"],
            *(p for f in t["flows"] for p in [*f["remote_topic_prefixes"], f["internal_prefix"]]),
        ]

    def tenant_of(self, kind: str, namespace: str, obj: dict[str, Any]) -> str | None:
        """The tenant by the namespace's label; in a Strimzi namespace, the owner per the generated objects."""
        labels = self.namespaces.get(namespace)
        if labels is None:
            return None
        if labels.get(TENANT):
            return labels[TENANT]
        if namespace not in self.strimzi_namespaces:
            return None
        name = (obj.get("metadata") or {}).get("name")
        if kind == "KafkaTopic":
            spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
            topic = spec.get("topicName") if isinstance(spec.get("topicName"), str) and spec.get("topicName") else name
            owners = sorted(
                (
                    (len(p), t)
                    for t in self.tenants
                    for p in self.topic_names(t)
                    if isinstance(topic, str) and topic.startswith(p)
                ),
                reverse=True,
            )
            return owners[0][1] if owners else None
        if kind == "Secret":  # credentials by the repo's names (principals' and flows')
            owners = {
                t
                for t, tenant in self.tenants.items()
                for secrets in tenant["names"]["principal_secrets"]
                if name in secrets
            }
            owners |= {t for t, tenant in self.tenants.items() for f in tenant["flows"] if name in f["mm2_secrets"]}
            return owners.pop() if len(owners) == 1 else None
        for base in self.bases:
            labels = base["metadata"]["labels"]
            if base["kind"] == kind and base["metadata"]["name"] == name and labels.get(TENANT):
                return labels[TENANT]
        return None


def _walk(value: Any, path: tuple = ()):
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, (*path, i))


def _secret_names(obj: Any) -> set[str]:
    """Every Secret named anywhere in a spec (any shape), as the oracle sees it."""
    found = set()
    for path, value in _walk(obj):
        if path and path[-1] in ("secretName", "pattern") and len(path) > 0:
            found.add(json.dumps(value))
        if (
            path
            and path[-1] == "name"
            and len(path) > 1
            and path[-2] in ("secretKeyRef", "secretRef", "nodePublishSecretRef", "secret")
        ):
            found.add(json.dumps(value))
    return found


# ---- the scope oracle ---------------------------------------------------------------------------


class ScopeOracle:
    """Whether an admitted object stays in scope, decided from the generated objects and Kafka's code."""

    def __init__(self, world: World, java) -> None:
        self.world = world
        self.java = java
        self.mm2_bases: dict[str, list[dict]] = {}  # tenant -> its generated MirrorMaker 2s
        self.user_acls: dict[tuple[str, str], list[dict]] = {}
        for base, tenant in zip(world.bases, world.base_tenant, strict=True):
            if base["kind"] == "KafkaMirrorMaker2":
                self.mm2_bases.setdefault(tenant, []).append(base)
            elif base["kind"] == "KafkaUser":
                acls = base["spec"]["authorization"]["acls"]
                self.user_acls.setdefault((tenant, base["metadata"]["name"]), []).extend(acls)
        clusters = world.document["clusters"].values()
        self.ca_names = {c["security"]["ca_secret"] for c in clusters}
        # Credential names are the repo's (governance/model/names.py, sent in the repo document):
        # per user, per tenant, per flow.
        self.user_secrets: dict[str, set[str]] = {}
        self.secret_names: dict[str, set[str]] = {}
        self.flow_secrets: dict[str, set[str]] = {}
        for name, tenant in world.tenants.items():
            for principal, secrets in zip(tenant["principals"], tenant["names"]["principal_secrets"], strict=True):
                self.user_secrets.setdefault(principal["name"][5:], set()).update(secrets)
                self.secret_names.setdefault(name, set()).update(secrets)
            for flow in tenant["flows"]:
                self.user_secrets.setdefault(flow["mm2_user"], set()).update(flow["mm2_secrets"])
                self.secret_names.setdefault(name, set()).update(flow["mm2_secrets"])
                self.flow_secrets[flow["id"]] = set(flow["mm2_secrets"])
        self.base_views = {id(b): self._view(b, self._base_lists(b), b) for bs in self.mm2_bases.values() for b in bs}

    @staticmethod
    def _base_lists(base: dict) -> dict[str, list[str]]:
        """The generated bootstrap servers are one host:port each."""
        spec = base["spec"]
        return {c["bootstrapServers"]: [c["bootstrapServers"]] for c in [spec["target"], spec["mirrors"][0]["source"]]}

    # -- views of a KafkaMirrorMaker2 ---------------------------------------------------------------
    def _servers(self, value: Any, lists: dict[str, list[str]]) -> Any:
        if not isinstance(value, str):
            return ["not a string", value]
        return sorted({item.lower() for item in lists.get(value, ["unparsed:" + value])})

    def _own(self, base: dict) -> set[str]:
        return self.flow_secrets[base["metadata"]["labels"]["mm2gov.io/flow"]] | self.ca_names

    def _view(self, obj: dict[str, Any], lists: dict[str, list[str]], base: dict) -> str:
        """The routing-relevant content of `obj` next to `base`: the spec without benign fields and
        patterns, in the v1 shape; bootstrap servers as sets of Kafka LIST items; the flow's own
        Connect names, Secrets and password mechanisms as such; a pod template or JVM setting that
        references only the flow's own Secrets and redirects nothing, left out."""
        spec = copy.deepcopy(obj.get("spec"))
        if not isinstance(spec, dict):
            return json.dumps(["malformed", spec])
        own = self._own(base)
        internal = base["spec"]["target"]["groupId"].rsplit(".", 1)[0] + "."
        _v1_shape(spec)
        for key in BENIGN_SPEC:
            spec.pop(key, None)
        if _benign_template(spec.get("template"), own):
            spec.pop("template", None)
        if _benign_template({"external": spec.get("externalConfiguration")}, own):
            spec.pop("externalConfiguration", None)
        jvm = spec.get("jvmOptions")
        if isinstance(jvm, dict) and isinstance(jvm.get("javaSystemProperties"), list):
            jvm["javaSystemProperties"] = [
                p
                for p in jvm["javaSystemProperties"]
                if not (isinstance(p, dict) and p.get("name") == "java.net.preferIPv4Stack")
            ]
            if jvm == {"javaSystemProperties": []}:
                spec.pop("jvmOptions")
        mirrors = spec["mirrors"] if isinstance(spec.get("mirrors"), list) else []
        connections = [spec.get("target"), *(m.get("source") for m in mirrors if isinstance(m, dict))]
        for mirror in mirrors:
            if not isinstance(mirror, dict):
                continue
            for key in PATTERNS:
                mirror.pop(key, None)
            for connector in CONNECTORS:
                part = mirror.get(connector)
                if isinstance(part, dict):
                    part.pop("tasksMax", None)
                    if isinstance(part.get("config"), dict):
                        part["config"] = _config(part["config"])
                    emits = {
                        "checkpointConnector": "emit.checkpoints.enabled",
                        "heartbeatConnector": "emit.heartbeats.enabled",
                    }.get(connector)
                    if emits and part == {"config": {emits: "false"}}:  # a connector that writes nothing
                        mirror.pop(connector)
                    elif isinstance(part.get("config"), dict):
                        _outputs_off(part["config"], _base_connector_config(base, connector))
        for connection in connections:
            if not isinstance(connection, dict):
                continue
            if "bootstrapServers" in connection:
                connection["bootstrapServers"] = self._servers(connection["bootstrapServers"], lists)
            if isinstance(connection.get("config"), dict):
                connection["config"] = _config(connection["config"])
                if not connection["config"]:  # only benign keys: the same as no config map
                    connection.pop("config")
            for key in ("groupId", "configStorageTopic", "offsetStorageTopic", "statusStorageTopic"):
                if (
                    isinstance(connection.get(key), str)
                    and connection[key].startswith(internal)
                    and len(connection[key]) > len(internal)
                ):
                    connection[key] = "the flow's own"
            auth = connection.get("authentication")
            if isinstance(auth, dict):
                if auth.get("type") in ("scram-sha-512", "scram-sha-256", "plain"):
                    auth["type"] = "password"
                for key in ("passwordSecret", "certificateAndKey"):
                    if isinstance(auth.get(key), dict) and auth[key].get("secretName") in own:
                        auth[key] = {"secretName": "the flow's own"}
        if "mirrors" in spec:  # the same mirror twice mirrors nothing more
            spec["mirrors"] = sorted({json.dumps(m, sort_keys=True) for m in mirrors})
        return json.dumps(spec, sort_keys=True)

    # -- questions for Kafka's code ------------------------------------------------------------------
    def questions(self, kind: str, obj: dict[str, Any], tenant: str | None, hints: list[str]) -> list[dict]:
        """The oracle requests one admitted object needs (LIST parsing, filter matches)."""
        if kind != "KafkaMirrorMaker2" or tenant not in self.world.tenants or not isinstance(obj.get("spec"), dict):
            return []
        asked: list[dict] = []
        spec = copy.deepcopy(obj["spec"])
        _v1_shape(spec)
        connections = [spec.get("target")]
        mirrors = spec.get("mirrors") if isinstance(spec.get("mirrors"), list) else []
        connections += [m.get("source") for m in mirrors if isinstance(m, dict)]
        for connection in connections:
            if isinstance(connection, dict) and isinstance(connection.get("bootstrapServers"), str):
                asked.append({"op": "list", "value": connection["bootstrapServers"]})
        for mirror in mirrors:
            if not isinstance(mirror, dict):
                continue
            for kind_, include, exclude in (
                ("topic", "topicsPattern", "topicsExcludePattern"),
                ("group", "groupsPattern", "groupsExcludePattern"),
            ):
                value = mirror.get(include)
                if isinstance(value, str):
                    names = candidates(self.world, kind_, hints)
                    excluded = mirror.get(exclude) if isinstance(mirror.get(exclude), str) else None
                    asked.append({"op": "regex", "kind": kind_, "include": value, "exclude": excluded, "names": names})
        return asked

    def foreign_names(self, tenant: str) -> set[str]:
        """Secret names a tenant may not hold: other tenants' credentials, admin credentials, CA keys."""
        clusters = self.world.document["clusters"].values()
        admin = {c["security"]["admin_credentials_secret"] for c in clusters}
        keys = {c["security"]["ca_secret"] + "-key" for c in clusters}
        others = set().union(*(names for t, names in self.secret_names.items() if t != tenant))
        return (others - self.secret_names.get(tenant, set())) | admin | keys

    def off_cloud(self, label: Any) -> bool:
        """Every cluster a strimzi.io/cluster label may designate (by Strimzi name or alias) is off cloud."""
        clusters = self.world.document["clusters"]
        designated = [c for alias, c in clusters.items() if label in (alias, c.get("strimzi_cluster"))]
        return bool(designated) and all(c["zone"] != "cloud" for c in designated)

    def judge(self, kind: str, namespace: str, obj: dict[str, Any], answers: list[dict]) -> str:
        """ "" when the admitted object stays in scope, else why not."""
        world = self.world
        tenant = world.tenant_of(kind, namespace, obj)
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        labels = metadata.get("labels") if isinstance(metadata.get("labels"), dict) else {}
        name = metadata.get("name")
        keys = set(obj.get("data") or {}) | set(obj.get("stringData") or {})
        public = keys <= {"ca.crt", "ca.p12", "ca.password"}
        if kind == "Secret" and name in self.ca_names and labels.get("mm2gov.io/kind") == "ca" and public:
            return _secret_problem(obj)  # a cluster CA certificate: no tenant's, public
        if tenant is None or tenant not in world.tenants:
            return f"no tenant owns {kind} {name} in namespace {namespace}"
        if TENANT in labels and labels[TENANT] != tenant:
            return f"labelled {labels[TENANT]!r} but owned by {tenant}"
        restricted = world.tenants[tenant]["classification"] == "restricted"
        if kind == "Secret":
            if name in self.ca_names and not public:
                return f"{name} holds more than a CA certificate"
            if name in self.foreign_names(tenant):
                return f"Secret {name} is a credential of another tenant, or a cluster's admin or CA key"
            return _secret_problem(obj)
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        cluster_label = labels.get("strimzi.io/cluster")
        if kind == "KafkaTopic":
            topic = spec.get("topicName") if isinstance(spec.get("topicName"), str) and spec.get("topicName") else name
            if not isinstance(topic, str) or not topic.startswith(tuple(world.topic_names(tenant))):
                return f"topic {topic!r} outside {tenant}'s names"
            if restricted and not self.off_cloud(cluster_label):
                return f"restricted {tenant}'s topic on cluster {cluster_label!r}"
            return ""
        if kind == "KafkaUser":
            if (tenant, name) not in self.user_acls:
                return f"{name} is not a user of {tenant}"
            if restricted and not self.off_cloud(cluster_label):
                return f"restricted {tenant}'s user on cluster {cluster_label!r}"
            own = {json.dumps(secret) for secret in self.user_secrets.get(name, set())}
            if not _secret_names(spec) <= own:
                return f"secrets {_secret_names(spec) - own} are not {name}'s"
            authorization = spec.get("authorization") if isinstance(spec.get("authorization"), dict) else {}
            for acl in authorization.get("acls") or []:
                if isinstance(acl, dict) and acl.get("type", "allow") == "deny":
                    continue
                if not _acl_covered(acl, self.user_acls[(tenant, name)]):
                    return f"ACL {acl} beyond {name}'s generated ACLs"
            return ""
        # KafkaMirrorMaker2
        lists = {}
        matches = []
        for question, answer in answers:
            if "error" in answer:
                return f"Kafka's code refuses {question.get('value') or question.get('include')!r}: {answer['error']}"
            if question["op"] == "list":
                lists[question["value"]] = answer["items"]
            else:
                matches.append((question, answer["matches"]))
        if not any(
            self._view(obj, lists, base) == self.base_views[id(base)] for base in self.mm2_bases.get(tenant, [])
        ):
            return f"routing differs from every generated MirrorMaker 2 of {tenant}"
        t = world.tenants[tenant]
        mirrors = spec.get("mirrors") if isinstance(spec.get("mirrors"), list) else []
        for mirror in mirrors:
            if not isinstance(mirror, dict):
                return "a mirror that is not an object"
            if not isinstance(mirror.get("topicsPattern"), str):
                return "no topicsPattern: MM2 mirrors '.*'"
            if "checkpointConnector" in mirror and not isinstance(mirror.get("groupsPattern"), str):
                return "no groupsPattern with checkpoints: MM2 syncs every group"
        for question, matched in matches:
            prefixes = tuple(t["topic_prefixes"] if question["kind"] == "topic" else t["group_prefixes"])
            outside = [n for n in matched if not n.startswith(prefixes)]
            if outside:
                return f"{question['kind']}s {question['include']!r} match {outside[:3]} outside {prefixes}"
        return ""


def _secret_problem(obj: dict[str, Any]) -> str:
    """A Secret that holds more than its name says: another type (a token the API server fills in,
    a registry credential, ...) or key material in an annotation."""
    if obj.get("type") not in (None, "", "Opaque"):
        return f"Secret type {obj.get('type')}"
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    if "-----BEGIN" in json.dumps(metadata.get("annotations")):
        return "PEM in an annotation"
    return ""


def _v1_shape(spec: dict[str, Any]) -> None:
    """A v1beta2 spec (connectCluster, clusters, sourceCluster/targetCluster) in the v1 shape, in place."""
    if "clusters" not in spec and "connectCluster" not in spec:
        return
    clusters = {c.get("alias"): c for c in spec.pop("clusters", None) or [] if isinstance(c, dict)}
    connect = spec.pop("connectCluster", None)
    if connect in clusters:
        spec["target"] = clusters[connect]
    for mirror in spec.get("mirrors") if isinstance(spec.get("mirrors"), list) else []:
        if (
            isinstance(mirror, dict)
            and mirror.get("targetCluster", connect) == connect
            and mirror.get("sourceCluster") in clusters
        ):
            mirror.pop("targetCluster", None)
            source = copy.deepcopy(clusters[mirror.pop("sourceCluster")])
            for key in ("groupId", "configStorageTopic", "offsetStorageTopic", "statusStorageTopic"):
                source.pop(key, None)
            mirror["source"] = source


def _config(config: dict[str, Any]) -> dict[str, Any]:
    """A config map without benign keys, booleans as Kafka reads them."""
    kept = {}
    for key, value in config.items():
        if key in BENIGN_CONFIG or (key == "connector.client.config.override.policy" and value == "None"):
            continue
        kept[key] = str(value).lower() if isinstance(value, bool) or str(value).lower() in ("true", "false") else value
    return kept


# Switches that, set to false, turn off one of MirrorMaker 2's own outputs (offset syncs, checkpoints, group
# offset sync, heartbeats, ACL sync): false routes nothing the generated object does not.
OFF_SWITCHES = ("emit.offset-syncs.enabled", "emit.checkpoints.enabled", "sync.group.offsets.enabled",
                "emit.heartbeats.enabled", "sync.topic.acls.enabled")


def _base_connector_config(base: dict[str, Any], connector: str) -> dict[str, Any]:
    mirror = base["spec"]["mirrors"][0]
    return _config(mirror[connector]["config"]) if connector in mirror else {}


# MirrorMaker 2's defaults of the switches above (MirrorConnectorConfig and friends, Kafka 4).
SWITCH_DEFAULTS = {"emit.offset-syncs.enabled": "true", "emit.checkpoints.enabled": "true",
                   "sync.group.offsets.enabled": "false", "emit.heartbeats.enabled": "true",
                   "sync.topic.acls.enabled": "true"}


def _outputs_off(config: dict[str, Any], base: dict[str, Any]) -> None:
    """Read an output switched off as the generated value (in place): it writes less, never elsewhere; and a
    switch the generated connector leaves unset, set to MM2's default, as unset."""
    for key in OFF_SWITCHES:
        if config.get(key) == "false" and key in base:
            config[key] = base[key]
        elif key not in base and config.get(key) in ("false", SWITCH_DEFAULTS[key]):
            config.pop(key)


def _benign_template(template: Any, own: set[str]) -> bool:
    """A pod template (or external configuration) that names only the flow's own Secrets and the
    clusters' CAs, and changes neither name resolution nor the process's environment beyond TZ."""
    if template is None or template == {"external": None}:
        return True
    if not isinstance(template, dict) or not _secret_names(template) <= {json.dumps(s) for s in own}:
        return False
    pod = template.get("pod") if isinstance(template.get("pod"), dict) else {}
    dns = pod.get("dnsConfig") if isinstance(pod.get("dnsConfig"), dict) else {}
    if pod.get("hostAliases") or pod.get("dnsPolicy") == "None" or dns.get("nameservers") or dns.get("searches"):
        return False
    for part in template.values():
        for variable in (part.get("env") or []) if isinstance(part, dict) else []:
            if not isinstance(variable, dict) or (variable.get("name") != "TZ" and "valueFrom" not in variable):
                return False
    return True


def _acl_covered(acl: Any, allowed: list[dict]) -> bool:
    if not isinstance(acl, dict) or not isinstance(acl.get("resource"), dict):
        return False
    resource = acl["resource"]
    operations = acl.get("operations") if isinstance(acl.get("operations"), list) else [acl.get("operation")]
    name, pattern = resource.get("name"), resource.get("patternType", "literal")
    for op in operations:
        ok = False
        for grant in allowed:
            granted = grant["resource"]
            if granted["type"] != resource.get("type") or op not in grant["operations"]:
                continue
            if (
                granted["type"] == "cluster"
                or (
                    isinstance(name, str)
                    and granted.get("patternType") == "prefix"
                    and name.startswith(granted["name"])
                    and pattern in ("literal", "prefix")
                )
                or (name == granted.get("name") and pattern == granted.get("patternType", "literal"))
            ):
                ok = True
        if not ok:
            return False
    return True


def candidates(world: World, kind: str, hints: list[str]) -> list[str]:
    """Names to ask MM2's filter about: around every tenant's prefixes, Kafka's and MM2's own, and the
    names the mutation aimed at."""
    names = {  # no "": no topic is named so, and no tenant owns the empty group id
        "x",
        "heartbeats",
        "__consumer_offsets",
        "connect-configs",
        "mm2-offset-syncs.cloud.internal",
        "mm2gov.ownership",
        "onprem.heartbeats",
        "a,b",
    }
    for tenant in world.tenants.values():
        prefixes = tenant["topic_prefixes"] if kind == "topic" else tenant["group_prefixes"]
        if kind == "topic":
            prefixes = [
                *prefixes,
                *(p for f in tenant["flows"] for p in [*f["remote_topic_prefixes"], f["internal_prefix"]]),
            ]
        for prefix in prefixes:
            stem = prefix[:-1]
            names |= {
                prefix,
                stem,
                stem + "x",
                stem + "X.y",
                prefix.upper() + "x",
                prefix + "x",
                prefix + "orders",
                prefix + "orders.v2",
                prefix + "refunds",
                prefix + "public.x",
                prefix + "leads",
                prefix + "a1",
                prefix + "campaigns",
                prefix + "shipments",
                prefix + "exposures",
                prefix + "limits.eu",
                prefix + "internal",
                "x" + prefix + "y",
                prefix + "a-b_c",
            }
    names |= {h for h in hints if isinstance(h, str)}
    return sorted(names)


# ---- mutations ----------------------------------------------------------------------------------

HOSTILE_PATTERNS = [
    ".*",
    "",
    " ",
    ",",
    " , ",
    "payments\\..*|.*",
    "(payments|marketing)\\..*",
    "payments.*",
    "pay.*",
    "payments\\.(x|.*)",
    "payments\\..*,marketing\\..*",
    "payments\\..*, .*",
    "payments\\..*,,",
    "(?i)payments\\..*",
    "(?i:payments)\\..*",
    "PAYMENTS\\..*",
    "payments\\..{0,5}",
    "payments\\.x{1,}",
    "(payments)\\1\\..*",
    "payments\\1.*",
    "\\Qpayments.\\E.*",
    "payments\\x2e.*",
    "payments\\u002e.*",
    "payments\\056.*",
    "(?x)payments\\. .* # x",
    "(?x)payments\\.\r.*",
    "payments\\.[^x]*",
    "payments[.].*",
    "payments\\p{Punct}.*",
    "payments\\..*(?=x)",
    "(?!marketing).*",
    "payments\\.(?<n>x).*",
    "[\\w&&[^m]]*",
    "payments\\..*$|^.*",
    "^payments\\..*$",
    "(?:payments\\.)+.*",
    "payments\\.\\d*",
    "payments\\.[a-z]*|marketing\\.[a-z]*",
    "payments\\..*\n.*",
    "payments\\..*\t,x",
    "payments\\.orders.*,payments\\.refunds",
    "payments\\.public\\..*",
    "marketing\\.leads.*",
    "onprem\\.payments\\..*",
    "mm2gov\\..*",
    "logistics\\.shipments",
    "risk\\..*",
    "payments-.*",
    "marketing-.*",
    "^$",
    "payments\\.(orders|refunds)",
    "payments\\.orders[0-9]?",
    "payments\\.+.*",
    "payments\\.*",
    "payments\\.?.*",
    "(payments\\.)?.*",
    "payments\\.orders|x",
    "(?s).*",
    "(?u)payments\\..*",
    "(?d)payments\\..*",
    "payments\\.\\Q.*\\E",
    "[p]ayments\\..*",
    "[^m]ayments\\..*",
    "payments\\.[\\.]*",
    "payments\\.[a-zA-Z0-9._-]*",
    "[a-z]+\\..*",
    "\\.*",
    "payments\\.\u00e9.*",
    "pay\u200bments\\..*",
]
FRAGMENTS = [
    "payments",
    "marketing",
    "logistics",
    "risk",
    "hr",
    "pay",
    "ments",
    "\\.",
    ".",
    ".*",
    "-",
    "_",
    "x",
    "orders",
    "(",
    ")",
    "|",
    "?",
    "*",
    "+",
    "{2}",
    "^",
    "$",
    ",",
    " ",
    "[a-z]",
    "[^.]",
    "(?i)",
    "\\1",
    "\\Q",
    "\\E",
    "(?:",
    "onprem\\.",
    "mm2gov\\.",
    "\\",
    "[",
    "]",
    "{",
    "}",
    "\\-",
    "\\d",
    "\\w",
    "\\s",
]


def random_pattern(rng: random.Random, tenant: dict[str, Any], kind: str) -> str:
    prefixes = tenant["topic_prefixes"] if kind == "topic" else tenant["group_prefixes"]
    anchored = [p.replace(".", "\\.") for p in prefixes] or ["x"]
    parts = [rng.choice(anchored)] if rng.random() < 0.6 else []
    parts += [rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 7))]
    return "".join(parts)


def _tenant_of_base(world: World, index: int) -> dict[str, Any]:
    return world.tenants.get(world.base_tenant[index]) or next(iter(world.tenants.values()))


def _all_secret_names(world: World) -> list[str]:
    names = {
        c["security"][k] for c in world.document["clusters"].values() for k in ("ca_secret", "admin_credentials_secret")
    }
    names |= {c["security"]["ca_secret"] + "-key" for c in world.document["clusters"].values()}
    for tenant in world.tenants.values():
        names |= {s for group in tenant["names"]["principal_secrets"] for s in group}
        names |= {s for f in tenant["flows"] for s in f["mm2_secrets"]}
    return sorted(names)


def _users(world: World) -> list[str]:
    users = {"admin", "ANONYMOUS", "mm2-", "payments-app ", "Payments-App"}
    for tenant in world.tenants.values():
        users |= {p["name"][5:] for p in tenant["principals"]} | {f["mm2_user"] for f in tenant["flows"]}
    return sorted(users)


def mutate_mm2(rng: random.Random, world: World, index: int) -> tuple[str, dict[str, Any], list[str]]:
    obj = copy.deepcopy(world.bases[index])
    spec = obj["spec"]
    tenant = _tenant_of_base(world, index)
    mirror = spec["mirrors"][0]
    connections = [spec["target"], mirror["source"]]
    servers = sorted({c["bootstrap_servers"] for c in world.document["clusters"].values()})
    choice = rng.randrange(16)
    hints: list[str] = []
    if choice <= 3:  # patterns
        field_ = rng.choice(PATTERNS)
        kind = "group" if field_.startswith("group") else "topic"
        how = rng.randrange(4)
        if how == 0:
            value = rng.choice(HOSTILE_PATTERNS)
        elif how == 1:
            value = random_pattern(rng, tenant, kind)
        elif how == 2:
            value = (
                (mirror.get(field_) or "")
                + rng.choice([",", ", ", " ,", ",\t", "|"])
                + rng.choice([random_pattern(rng, tenant, kind), rng.choice(HOSTILE_PATTERNS)])
            )
        else:
            value = rng.choice(HOSTILE_PATTERNS) + "," + (mirror.get(field_) or "")
        mirror[field_] = value
        if rng.random() < 0.2:
            mirror.pop(field_)
        return f"pattern:{field_}", obj, hints
    if choice == 4:  # connector and client config keys
        keys = [
            "source.consumer.bootstrap.servers",
            "source.admin.bootstrap.servers",
            "target.producer.bootstrap.servers",
            "target.admin.security.protocol",
            "producer.override.bootstrap.servers",
            "consumer.override.sasl.jaas.config",
            "admin.override.ssl.truststore.location",
            "source.cluster.producer.override.acks",
            "x.override.bootstrap.servers",
            "bootstrap.servers",
            "source.bootstrap.servers",
            "sasl.jaas.config",
            "sasl.mechanism",
            "ssl.keystore.location",
            "ssl.endpoint.identification.algorithm",
            "security.protocol",
            "config.providers",
            "config.providers.secrets.class",
            "connector.client.config.override.policy",
            "topic.filter.class",
            "group.filter.class",
            "replication.policy.class",
            "replication.policy.separator",
            "topics",
            "groups",
            "topics.exclude",
            "source.cluster.alias",
            "target.cluster.bootstrap.servers",
            "emit.offset-syncs.enabled",
            "sync.topic.acls.enabled",
            "offset-syncs.topic.location",
            "key.converter",
            "replication.factor",
            "refresh.topics.interval.seconds",
            "offset.lag.max",
            "request.timeout.ms",
            "Bootstrap.Servers",
            "consumer.bootstrap.servers",
            "admin.bootstrap.servers",
        ]
        values = [
            "attacker.example:9093",
            "PLAINTEXT",
            "All",
            "None",
            "true",
            "false",
            "source",
            ".*",
            "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
            "_",
            "${secrets:payments/x:y}",
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="x";',
            3,
            30,
            "",
            None,
        ]
        holders = [
            spec["target"],
            mirror["source"],
            mirror["sourceConnector"],
            mirror.setdefault(rng.choice(["checkpointConnector", "heartbeatConnector"]), {}),
        ]
        holder = rng.choice(holders)
        holder.setdefault("config", {})[rng.choice(keys)] = rng.choice(values)
        return "config", obj, hints
    if choice == 5:  # bootstrap servers
        connection = rng.choice(connections)
        own = connection["bootstrapServers"]
        connection["bootstrapServers"] = rng.choice(
            [
                rng.choice(servers),
                "attacker.example:9093",
                own + ",attacker.example:9093",
                own.upper(),
                f" {own} , {own}",
                own.replace("127.0.0.1", "localhost"),
                own.replace("127.0.0.1", "127.0.0.2"),
                own + ":1",
                "",
                "[::1]:29093",
                own.replace(":", ":0"),
                own + ",",
                "," + own,
                own.replace("93", "94"),
                f"{own}\t,\n{own}",
                9093,
                own + "," + rng.choice(servers),
            ]
        )
        return "bootstrap", obj, hints
    if choice == 6:  # authentication
        connection = rng.choice(connections)
        auth = connection.setdefault("authentication", {})
        how = rng.randrange(8)
        if how == 0:
            auth["username"] = rng.choice(_users(world))
        elif how == 1:
            auth["type"] = rng.choice(["custom", "oauth", "tls", "plain", "scram-sha-256", "gssapi", "", None])
        elif how == 2:
            auth["passwordSecret"] = {"secretName": rng.choice(_all_secret_names(world)), "password": "password"}
        elif how == 3:
            connection.pop("authentication")
        elif how == 4:
            auth[rng.choice(["password", "clientSecret", "accessToken", "refreshToken"])] = rng.choice(
                ["hunter2", {"secretName": rng.choice(_all_secret_names(world)), "key": "k"}]
            )
        elif how == 5:
            auth.update(
                type="tls",
                certificateAndKey={
                    "secretName": rng.choice(_all_secret_names(world)),
                    "certificate": "user.crt",
                    "key": "user.key",
                },
            )
        elif how == 6:
            auth["config"] = {"sasl.jaas.config": "x", "sasl.mechanism": "PLAIN"}
        else:
            auth.update(
                type="oauth",
                tokenEndpointUri="https://attacker.example/token",
                clientSecret={"secretName": rng.choice(_all_secret_names(world)), "key": "secret"},
            )
        return "authentication", obj, hints
    if choice == 7:  # TLS
        connection = rng.choice(connections)
        how = rng.randrange(3)
        if how == 0:
            connection.pop("tls", None)
        elif how == 1:
            connection["tls"] = {
                "trustedCertificates": [{"secretName": rng.choice(_all_secret_names(world)), "certificate": "ca.crt"}]
            }
        else:
            connection["tls"] = {"trustedCertificates": [{"pattern": rng.choice(["*", "*-ca", "scram-*"])}]}
        return "tls", obj, hints
    if choice == 8:  # pod template: volumes, projected sources, env
        secret = rng.choice(_all_secret_names(world))
        how = rng.randrange(6)
        template = spec.setdefault("template", {})
        if how == 0:
            template["pod"] = {"volumes": [{"name": "v", "secret": {"secretName": secret}}]}
        elif how == 1:
            template["pod"] = {"volumes": [{"name": "v", "projected": {"sources": [{"secret": {"name": secret}}]}}]}
        elif how == 2:
            template["connectContainer"] = {
                "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": secret, "key": "password"}}}]
            }
        elif how == 3:
            template["pod"] = {
                "volumes": [{"name": "v", "csi": {"driver": "d", "nodePublishSecretRef": {"name": secret}}}]
            }
        elif how == 4:
            template["connectContainer"] = {
                "env": [
                    {
                        "name": rng.choice(
                            ["JAVA_TOOL_OPTIONS", "KAFKA_OPTS", "CLASSPATH", "LD_PRELOAD", "STRIMZI_X", "TZ"]
                        ),
                        "value": "-Djava.security.auth.login.config=/tmp/jaas",
                    }
                ]
            }
        else:
            template["pod"] = rng.choice(
                [
                    {"hostAliases": [{"ip": "10.9.9.9", "hostnames": ["kafka"]}]},
                    {"dnsPolicy": "None", "dnsConfig": {"nameservers": ["10.9.9.53"]}},
                    {"dnsConfig": {"searches": ["attacker.example"]}},
                ]
            )
        return "template", obj, hints
    if choice == 9:  # JVM and external configuration
        if rng.random() < 0.5:
            spec["jvmOptions"] = {
                "javaSystemProperties": [
                    {
                        "name": rng.choice(
                            [
                                "javax.net.ssl.trustStore",
                                "java.security.auth.login.config",
                                "java.net.preferIPv4Stack",
                                "org.apache.kafka.sasl.oauthbearer.allowed.urls",
                            ]
                        ),
                        "value": "x",
                    }
                ]
            }
        else:
            spec["externalConfiguration"] = {
                "volumes": [{"name": "v", "secret": {"secretName": rng.choice(_all_secret_names(world))}}],
                "env": [
                    {
                        "name": "E",
                        "valueFrom": {
                            "secretKeyRef": {"name": rng.choice(_all_secret_names(world)), "key": "password"}
                        },
                    }
                ],
            }
        return "jvm", obj, hints
    if choice == 10:  # cluster aliases, Connect names, the v1beta2 shape
        how = rng.randrange(4)
        aliases = sorted(world.document["clusters"])
        if how == 0:
            spec["target"]["alias"] = rng.choice([*aliases, "elsewhere"])
        elif how == 1:
            mirror["source"]["alias"] = rng.choice([*aliases, "elsewhere"])
        elif how == 2:
            key = rng.choice(["groupId", "configStorageTopic", "offsetStorageTopic", "statusStorageTopic"])
            spec["target"][key] = rng.choice(
                [
                    "mirrormaker2-cluster",
                    "mm2gov.marketing-onprem-to-cloud.connect",
                    spec["target"][key] + "x",
                    "mm2gov.",
                ]
            )
        else:
            target = spec.pop("target")
            spec["connectCluster"] = target["alias"]
            spec["clusters"] = [mirror.pop("source"), target]
            mirror.update(sourceCluster=spec["clusters"][0]["alias"], targetCluster=target["alias"])
        return "clusters", obj, hints
    if choice == 11:  # benign changes
        how = rng.randrange(4)
        if how == 0:
            spec["replicas"] = rng.randrange(0, 5)
        elif how == 1:
            obj["metadata"].setdefault("annotations", {})["note"] = "reviewed"
        elif how == 2:
            mirror["sourceConnector"]["config"]["refresh.topics.interval.seconds"] = 60
        else:
            spec["resources"] = {"requests": {"memory": "1Gi"}}
        return "benign", obj, hints
    if choice == 12:  # another mirror appended
        extra = copy.deepcopy(mirror)
        extra["source"]["alias"] = rng.choice(sorted(world.document["clusters"]))
        extra["topicsPattern"] = rng.choice([*HOSTILE_PATTERNS, mirror["topicsPattern"]])
        spec["mirrors"].append(extra)
        return "mirrors", obj, hints
    if choice == 13:
        spec["mirrors"][0] = rng.choice([None, "x", [], {}])
        return "mirrors", obj, hints
    return mutate_identity(rng, world, index, obj)


def mutate_identity(rng: random.Random, world: World, index: int, obj: dict[str, Any]) -> tuple[str, dict, list[str]]:
    """Namespace, labels, name: who the object belongs to."""
    metadata = obj["metadata"]
    how = rng.randrange(4)
    tenants = sorted(world.tenants)
    if how == 0:
        metadata["namespace"] = rng.choice([*sorted(world.namespaces), "nowhere", "default", "kube-system"])
    elif how == 1:
        metadata.setdefault("labels", {})[TENANT] = rng.choice([*tenants, "", "nobody", "PAYMENTS",
                                                               *(look_alike(rng, t) for t in tenants)])
    elif how == 2:
        metadata.setdefault("labels", {}).pop(TENANT, None)
        metadata["namespace"] = rng.choice(sorted(world.namespaces))
    else:
        names = [b["metadata"]["name"] for b in world.bases if b["kind"] == obj["kind"]]
        metadata["name"] = rng.choice([*names, "x", "payments", "mm2-x", look_alike(rng, rng.choice(names))])
    return "identity", obj, []


def look_alike(rng: random.Random, name: str) -> str:
    """Issue 24's classes: `name` as another authority may take it (case, blanks, invisible characters,
    compatibility forms) or with a line break a careless serializer would turn into structure."""
    return rng.choice([name.upper(), name.capitalize(), f"{name} ", f" {name}", f"{name}\u200b", f"{name}\n",
                       f"{name}\nkind: Secret", name.replace("a", "\uff41"), f"{name}\u2028"])


def mutate_user(rng: random.Random, world: World, index: int) -> tuple[str, dict[str, Any], list[str]]:
    obj = copy.deepcopy(world.bases[index])
    spec = obj["spec"]
    acls = spec["authorization"]["acls"]
    choice = rng.randrange(7)
    if choice == 0:
        acls.append(
            {
                "resource": {
                    "type": rng.choice(["topic", "group", "cluster", "transactionalId"]),
                    "name": rng.choice(
                        [
                            "*",
                            "",
                            "marketing.",
                            "payments",
                            "payments.",
                            "onprem.",
                            "mm2gov.",
                            "risk.",
                            "hr.",
                            "logistics.",
                            "payments-",
                            "x",
                            look_alike(rng, rng.choice(["payments.", "marketing.", "mm2gov.", "risk."])),
                        ]
                    ),
                    "patternType": rng.choice(["literal", "prefix"]),
                },
                "operations": rng.sample(
                    [
                        "Read",
                        "Write",
                        "Describe",
                        "Create",
                        "Delete",
                        "Alter",
                        "All",
                        "DescribeConfigs",
                        "AlterConfigs",
                        "IdempotentWrite",
                    ],
                    rng.randrange(1, 3),
                ),
                "host": "*",
            }
        )
        return "acl", obj, []
    if choice == 1:
        acl = rng.choice(acls)
        acl["operations"] = acl["operations"] + [rng.choice(["Write", "Create", "All", "Delete", "Alter"])]
        return "acl", obj, []
    if choice == 2:
        acl = rng.choice(acls)
        acl["resource"]["name"] = acl["resource"]["name"][:-1] if rng.random() < 0.5 else acl["resource"]["name"] + "x"
        return "acl", obj, []
    if choice == 3:
        spec["authentication"] = rng.choice(
            [
                {
                    "type": "scram-sha-512",
                    "password": {
                        "valueFrom": {"secretKeyRef": {"name": rng.choice(_all_secret_names(world)), "key": "password"}}
                    },
                },
                {"type": "tls"},
                {"type": "scram-sha-512"},
            ]
        )
        return "password", obj, []
    if choice == 4:
        obj["metadata"]["labels"]["strimzi.io/cluster"] = rng.choice(["cloud", "onprem", "onprem-dr", "my-cluster", ""])
        return "cluster", obj, []
    if choice == 5:
        acls[:] = acls[: rng.randrange(len(acls) + 1)]  # fewer ACLs: narrower
        return "benign", obj, []
    return mutate_identity(rng, world, index, obj)


def mutate_topic(rng: random.Random, world: World, index: int) -> tuple[str, dict[str, Any], list[str]]:
    obj = copy.deepcopy(world.bases[index])
    choice = rng.randrange(4)
    if choice == 0:
        topic = rng.choice(
            [
                "marketing.x",
                "risk.x",
                "hr.x",
                "payments",
                "onprem.marketing.x",
                "mm2gov.x",
                "__consumer_offsets",
                "onprem.payments.x",
                "payments.x",
                "logistics.y",
                "",
                "cloud.payments.x",
                "onprem.risk.x",
                look_alike(rng, rng.choice(["payments.x", "onprem.payments.x", "risk.x", "marketing.x"])),
            ]
        )
        obj["spec"]["topicName"] = topic
        if rng.random() < 0.5:
            obj["metadata"]["name"] = topic or "empty"
        return "topic", obj, []
    if choice == 1:
        obj["metadata"]["labels"]["strimzi.io/cluster"] = rng.choice(["cloud", "onprem", "onprem-dr", "my-cluster"])
        return "cluster", obj, []
    if choice == 2:
        obj["spec"]["config"] = {"retention.ms": 1000, "cleanup.policy": "compact"}
        return "benign", obj, []
    return mutate_identity(rng, world, index, obj)


def mutate_secret(rng: random.Random, world: World, index: int) -> tuple[str, dict[str, Any], list[str]]:
    obj = copy.deepcopy(world.bases[index])
    choice = rng.randrange(5)
    if choice == 0:
        obj["metadata"]["name"] = rng.choice(_all_secret_names(world))
        return "secret-name", obj, []
    if choice == 1:
        obj["type"] = rng.choice(["kubernetes.io/service-account-token", "kubernetes.io/tls", "", "Opaque"])
        return "secret-type", obj, []
    if choice == 2:
        obj["metadata"].setdefault("annotations", {})[rng.choice(["note", "mm2gov.io/password", "api-token"])] = (
            rng.choice(["-----BEGIN PRIVATE KEY-----\nMII", "x"])
        )
        return "secret-annotation", obj, []
    if choice == 3:
        obj["data"]["ca.key"] = ""
        return "secret-keys", obj, []
    return mutate_identity(rng, world, index, obj)


MUTATORS = {
    "KafkaMirrorMaker2": mutate_mm2,
    "KafkaUser": mutate_user,
    "KafkaTopic": mutate_topic,
    "Secret": mutate_secret,
}


@dataclass
class Mutant:
    op: str
    kind: str
    namespace: str
    obj: Any
    body: bytes
    hints: list[str]


def _body(obj: dict[str, Any], uid: str, kind: str | None = None) -> bytes:
    review = acme_objects.admission_review(obj, uid)
    if kind is not None:
        review["request"]["kind"]["kind"] = kind
    return json.dumps(review).encode()


def make_mutants(world: World, count: int, seed: int) -> list[Mutant]:
    rng = random.Random(seed)
    weights = {"KafkaMirrorMaker2": 0.45, "KafkaUser": 0.25, "KafkaTopic": 0.1, "Secret": 0.1}
    mutants: list[Mutant] = []
    while len(mutants) < count:
        uid = f"m{len(mutants)}"
        roll = rng.random()
        if roll < 0.08:  # the raw body: duplicate keys, kinds, envelopes
            index = rng.randrange(len(world.bases))
            base = world.bases[index]
            body = _body(base, uid)
            how = rng.randrange(4)
            if how == 0 and base["kind"] == "KafkaMirrorMaker2":
                body = body.replace(b'"topicsPattern": ', b'"topicsPattern": ".*", "topicsPattern": ', 1)
                op = "raw:duplicate-pattern"
            elif how == 1:
                body = body.replace(b'"namespace": ', b'"namespace": "payments", "namespace": ', 1)
                op = "raw:duplicate-namespace"
            elif how == 2:
                other = rng.choice([k for k in MUTATORS if k != base["kind"]])
                obj = {**copy.deepcopy(base), "kind": other}
                body = _body(obj, uid, other)
                mutants.append(Mutant("raw:kind", other, base["metadata"]["namespace"], obj, body, []))
                continue
            elif TENANT in base["metadata"]["labels"]:
                body = body.replace(b'"labels": {', b'"labels": {"mm2gov.io/tenant": "payments", ', 1)
                op = "raw:duplicate-label"
            else:
                body = body.replace(b'"name": ', b'"name": "x", "name": ', 1)
                op = "raw:duplicate-name"
            mutants.append(Mutant(op, base["kind"], base["metadata"]["namespace"], None, body, []))
            continue
        kind = rng.choices(list(weights), list(weights.values()))[0]
        index = rng.choice(world.of_kind(kind))
        op, obj, hints = MUTATORS[kind](rng, world, index)
        namespace = obj["metadata"].get("namespace") or ""
        mutants.append(Mutant(op, kind, namespace, obj, _body(obj, uid), hints))
    return mutants


def _ask(java, questions: list[dict]) -> list[dict]:
    """The oracle's answers, one per question; an error answer instead of an exception."""
    if not questions:
        return []
    try:
        return java.requests(questions)
    except OracleError:
        answers = []
        for question in questions:
            try:
                answers.append(java.request(question))
            except OracleError as exc:
                answers.append({"error": str(exc)})
        return answers


# ---- the test -----------------------------------------------------------------------------------


def _judge(world: World, oracle: ScopeOracle, java, obj: dict[str, Any]) -> str:
    kind, namespace = obj["kind"], obj["metadata"]["namespace"]
    questions = oracle.questions(kind, obj, world.tenant_of(kind, namespace, obj), [])
    return oracle.judge(kind, namespace, obj, list(zip(questions, _ask(java, questions), strict=True)))


def _oracle_sees_out_of_scope_objects(world: World, oracle: ScopeOracle, java) -> None:
    """The oracle is not vacuous: it passes every base and refuses known leaks of every kind."""
    for base in world.bases:
        assert _judge(world, oracle, java, base) == "", base["metadata"]
    first = {kind: copy.deepcopy(world.bases[world.of_kind(kind)[0]]) for kind in MUTATORS}
    leaks = []
    for pattern in ("payments.*", "payments\\..*|marketing\\.x", "(?i)payments\\..*"):
        mm2 = copy.deepcopy(first["KafkaMirrorMaker2"])
        mm2["spec"]["mirrors"][0]["topicsPattern"] = pattern.replace("payments", mm2["metadata"]["labels"][TENANT])
        leaks.append(mm2)
    mm2 = copy.deepcopy(first["KafkaMirrorMaker2"])
    mm2["spec"]["target"]["bootstrapServers"] += ",attacker.example:9093"
    leaks.append(mm2)
    user = first["KafkaUser"]
    user["spec"]["authorization"]["acls"].append(
        {"resource": {"type": "topic", "name": "zzz.", "patternType": "prefix"}, "operations": ["Read"]}
    )
    topic = first["KafkaTopic"]
    topic["spec"]["topicName"] = "zzz.x"
    secret = copy.deepcopy(
        next(
            b
            for b in world.bases
            if b["metadata"]["labels"].get("mm2gov.io/kind") == "scram" and b["metadata"]["namespace"] in world.tenants
        )
    )
    secret["metadata"]["namespace"] = next(n for n in world.tenants if n != secret["metadata"]["namespace"])
    secret["metadata"]["labels"].pop(TENANT, None)
    for leak in [*leaks, user, topic, secret]:
        assert _judge(world, oracle, java, leak) != "", leak


def test_mutants_of_admitted_objects_are_admitted_only_in_scope(fuzz_webhook, java_oracle):
    began = time.monotonic()
    repo = fuzz_webhook["repo"]
    bases = acme_objects.allowed_objects(repo)
    # The generated MirrorMaker 2s in their tenants' namespaces are admitted too (name free there).
    for obj in [b for b in bases if b["kind"] == "KafkaMirrorMaker2"]:
        moved = copy.deepcopy(obj)
        moved["metadata"]["namespace"] = obj["metadata"]["labels"][TENANT]
        bases.append(moved)
    world = World(acme_objects.repo_document(repo), acme_objects.namespaces(repo), bases)
    oracle = ScopeOracle(world, java_oracle)
    port, ca = fuzz_webhook["port"], fuzz_webhook["ca"]

    answers = _post_all(port, ca, [_body(b, f"base{i}") for i, b in enumerate(bases)])
    refused = [
        (b["kind"], b["metadata"]["namespace"], b["metadata"]["name"], json.loads(a)["response"])
        for b, (_, a) in zip(bases, answers, strict=True)
        if not json.loads(a)["response"]["allowed"]
    ]
    assert refused == [], refused

    _oracle_sees_out_of_scope_objects(world, oracle, java_oracle)

    mutants = make_mutants(world, MUTANTS, SEED)
    sent = time.monotonic()
    answers = _post_all(port, ca, [m.body for m in mutants])
    webhook_seconds = time.monotonic() - sent

    crashes, allowed = [], []
    for i, (mutant, (status, body)) in enumerate(zip(mutants, answers, strict=True)):
        try:
            response = json.loads(body)["response"] if status == 200 else None
        except (ValueError, KeyError, TypeError):
            response = None
        if status == 400 and json.loads(body or b"{}").get("error"):
            continue  # a body without a readable uid: refused as a bad request
        if response is None or response.get("uid") != f"m{i}" or not isinstance(response.get("allowed"), bool):
            crashes.append((mutant.op, status, body[:300]))
        elif response["allowed"]:
            allowed.append(mutant)

    wrong = []
    judged = [m for m in allowed if m.obj is not None]
    questions = [oracle.questions(m.kind, m.obj, world.tenant_of(m.kind, m.namespace, m.obj), m.hints) for m in judged]
    flat = _ask(java_oracle, [q for qs in questions for q in qs])
    position = 0
    for mutant, asked in zip(judged, questions, strict=True):
        pairs = list(zip(asked, flat[position : position + len(asked)], strict=True))
        position += len(asked)
        why = oracle.judge(mutant.kind, mutant.namespace, mutant.obj, pairs)
        if why:
            wrong.append((mutant.op, why, json.dumps(mutant.obj)))
    wrong += [(m.op, "raw body allowed", m.body[:300]) for m in allowed if m.obj is None]

    by_op = Counter(m.op.split(":")[0] for m in mutants)
    allowed_by_op = Counter(m.op.split(":")[0] for m in allowed)
    elapsed = time.monotonic() - began
    print(
        f"\nadmission fuzz (seed {SEED}): {len(mutants)} mutants in {webhook_seconds:.1f} s through the webhook "
        f"({len(mutants) / webhook_seconds:.0f}/s), {len(allowed)} allowed, {len(wrong)} wrong allows, "
        f"{len(crashes)} crashes; {elapsed:.1f} s in all"
    )
    print("  mutants by operator:", dict(sorted(by_op.items())))
    print("  allowed by operator:", dict(sorted(allowed_by_op.items())))
    if os.environ.get("MM2GOV_FUZZ_DUMP"):  # every wrong allow, for a closer look
        with open(os.environ["MM2GOV_FUZZ_DUMP"], "w") as dump:
            json.dump([[op, why, str(obj)] for op, why, obj in wrong], dump, indent=1)
    assert crashes == [], crashes[:5]
    assert wrong == [], [(op, why, str(obj)[:1500]) for op, why, obj in wrong[:5]]
    assert len(mutants) >= 10_000 or MUTANTS < 10_000
    assert fuzz_webhook["process"].poll() is None
    assert "Traceback" not in fuzz_webhook["log"].read_text()
