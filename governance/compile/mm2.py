"""One dedicated MirrorMaker 2 per tenant flow, as a properties file runnable as is.

The file lays out the flow's connections, filters and Connect names; every MM2 setting in it comes from
the settings table (model/mm2_settings.py), which the Strimzi writer and admission read too. Every MM2
pitfall in FIELD.md is closed by construction:
- its own principal, Connect group and Connect topics (`mm2gov.<flow>.*`), so two
  tenants' MM2s share no control plane and no internal topic;
- checkpoints, offset-syncs (on the target) and heartbeats on, in the flow's
  own topics (`mm2gov.<flow>.offset-syncs/checkpoints/heartbeats`, from
  names.mm2_flow_topics): the flow's ReplicationPolicy (replication-policy/,
  io.mm2gov.replication.Flow*ReplicationPolicy) names them from the
  `mm2gov.flow.*` keys, never MM2's per-alias names that every flow between
  the same clusters would share (pitfall 4). Group offsets are synced into the
  tenant's own groups on the target (`sync.group.offsets.enabled`). Nothing is
  written on the source (`offset-syncs.topic.location=target`, the reverse
  heartbeats herder off);
- `sync.topic.acls.enabled=false` (pitfall 1), patterns that OPA proved to stay
  inside the tenant's prefixes (pitfall 3), `topics.exclude` (never the
  `topics.blacklist` Kafka 4 removed: it would be silently ignored there) as
  mm2gov's exclusions followed by the tenant's own `exclude_topics`;
- credentials as DirectoryConfigProvider references to mounted secrets, never values;
- `delivery: exactly_once` flows only: KIP-618 transactions on the target under the
  flow's own transactional ids, the source read committed (`exactly_once_entries`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial

from governance.config.schema import Cluster
from governance.files import property_comment, property_line
from governance.model import mm2_settings
from governance.model.mm2_settings import Section
from governance.model.names import CA_CERT_KEY, PASSWORD_KEY, REPLICATION_POLICY_CLASSES, scram_secret, user_name
from governance.model.tenancy import Flow, Tenancy

REPLICATION_POLICIES = REPLICATION_POLICY_CLASSES  # one mapping, in names.py (the OPA input carries it too)
# Kafka 3.x's default topics.exclude (`.*[\-\.]internal`, ...; 4.x narrowed its first item to `mm2.*\.internal`)
# and the flows' own topics: every flow excludes these, whatever its tenant adds (`topics_exclude`).
TOPICS_EXCLUDE = r".*[\-\.]internal,.*\.replica,__.*,mm2gov\..*"
# MM2's default groups.exclude (DefaultGroupFilter.GROUPS_EXCLUDE_DEFAULT, the same in 3.9 and 4.3): setting
# groups.exclude replaces it, so a flow's own exclusions come after it, never instead of it.
GROUPS_EXCLUDE = r"console-consumer-.*,connect-.*,__.*"
TLS_PROTOCOLS = {
    "TLSv1": "TLSv1.3,TLSv1.2,TLSv1.1,TLSv1", "TLSv1.1": "TLSv1.3,TLSv1.2,TLSv1.1",
    "TLSv1.2": "TLSv1.3,TLSv1.2", "TLSv1.3": "TLSv1.3",
}
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
TENANT_LINE_PREFIX = "# MirrorMaker 2 for tenant "
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


@dataclass(frozen=True)
class Mm2Flow:
    """One flow's MirrorMaker 2. Its properties file is rendered the first time it is read: `generate` reads
    every one, `apply` and `drift` (which need the flows' clusters only) none."""

    flow_id: str
    tenant: str
    source: str
    target: str
    render: Callable[[], str] = field(repr=False, compare=False)

    @cached_property
    def properties(self) -> str:
        return self.render()


Entry = tuple[str, str] | str | None  # a key and its value, a comment line, or a blank line


def security_properties(alias: str, cluster: Cluster, principal: str, secrets_path: str) -> list[Entry]:
    """Client security for one cluster alias; secrets by `${dir:...}` reference only."""
    security = cluster.security
    entries: list[Entry] = [(f"{alias}.security.protocol", security.protocol)]
    if security.protocol in ("SASL_SSL", "SASL_PLAINTEXT"):
        module = PLAIN_MODULE if security.sasl_mechanism == "PLAIN" else SCRAM_MODULE
        secret_dir = f"{secrets_path}/{scram_secret(alias, principal)}"
        entries += [
            (f"{alias}.sasl.mechanism", str(security.sasl_mechanism)),
            (f"{alias}.sasl.jaas.config", f'{module} required username="{jaas_quoted(user_name(principal))}" '
                                          f'password="${{dir:{secret_dir}:{PASSWORD_KEY}}}";'),
        ]
    if security.protocol in ("SSL", "SASL_SSL"):
        entries += [(f"{alias}.ssl.enabled.protocols", TLS_PROTOCOLS[security.tls_min_version]),
                    (f"{alias}.ssl.endpoint.identification.algorithm", "https")]
        if security.ca_secret:
            entries += [(f"{alias}.ssl.truststore.type", "PEM"),
                        (f"{alias}.ssl.truststore.location", f"{secrets_path}/{security.ca_secret}/{CA_CERT_KEY}")]
    return entries


def jaas_quoted(text: str) -> str:
    """A value inside a JAAS option's double quotes (Kafka's JaasConfig reads \\ and \\" as escapes)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def render(entries: list[Entry]) -> str:
    """A .properties file as `java.util.Properties` reads it back, key for key and value for value.

    Escaping is javaproperties' (backslashes, `=`/`:` in keys, leading spaces, line breaks,
    non-ASCII as \\uXXXX), never hand-written: a raw `payments\\..*` reads back as `payments..*`
    and a line break inside a value starts a new key (FIELD.md pitfall 9).
    """
    lines = ["" if e is None else property_comment(f" {e}") if isinstance(e, str)
             else property_line(*e) for e in entries]
    return "\n".join(lines) + "\n"


def flow_entries(tenant: str, flow: Flow, clusters: Mapping[str, Cluster], secrets_path: str,
                 header: str) -> list[Entry]:
    source, target, flow_id = flow.source, flow.target, flow.id
    principal, connect, topics = flow.mm2_principal, flow.connect, flow.mm2_topics
    pair = f"{source}->{target}"
    settings = mm2_settings.for_flow(flow)  # once, for every section below
    entries: list[Entry] = [
        header.removeprefix("# "),
        f"{TENANT_LINE_PREFIX.removeprefix('# ')}{tenant}, flow {flow_id}: {source} -> {target}, "
        "run in dedicated mode:",
        "  java -cp 'libs/*' org.apache.kafka.connect.mirror.MirrorMaker <this file>",
        f"Principal {principal} on both clusters; secrets are read from {secrets_path}.",
        ("clusters", f"{source},{target}"),
        ("config.providers", "dir"),
        ("config.providers.dir.class", "org.apache.kafka.common.config.provider.DirectoryConfigProvider"),
        ("config.providers.dir.param.allowed.paths", secrets_path),
        None,
        *[(f"{alias}.bootstrap.servers", clusters[alias].bootstrap_servers) for alias in (source, target)],
        *security_properties(source, clusters[source], principal, secrets_path),
        *security_properties(target, clusters[target], principal, secrets_path),
        None,
        "This flow only; the reverse direction is off.",
        (f"{pair}.enabled", "true"),
        (f"{target}->{source}.enabled", "false"),
        (f"{pair}.topics", ",".join(flow.topic_items)),  # items have no comma (config/regex.py grammar)
        (f"{pair}.topics.exclude", topics_exclude(flow.exclude_topics)),
        (f"{pair}.groups", ",".join(flow.groups) or "^$"),
        *([(f"{pair}.groups.exclude", groups_exclude(flow.exclude_groups))] if flow.exclude_groups else []),
        *settings_entries(flow, Section.POLICY, settings),
        None,
        "Isolation: own Connect group and topics; no ACL sync.",
        (f"{target}.group.id", connect.group),
        (f"{target}.config.storage.topic", connect.configs),
        (f"{target}.offset.storage.topic", connect.offsets),
        (f"{target}.status.storage.topic", connect.status),
        *settings_entries(flow, Section.ISOLATION, settings),
        *exactly_once_entries(flow, settings),
        *internal_rest_entries(flow, settings),
        None,
        "Offset translation in the flow's own topics on the target, never MM2's per-alias names that",
        "every flow between these clusters would share: the replication policy names them from these",
        "keys, scoped to the pair (MirrorMakerConfig drops unknown top-level keys).",
        *settings_entries(flow, Section.OFFSETS, settings),
        f"Heartbeats into {topics.heartbeats}: the flow's liveness on the target; the reverse",
        "direction's heartbeats herder would write into the source, so it is off.",
        *settings_entries(flow, Section.HEARTBEATS, settings),
        *settings_entries(flow, Section.MIRRORING, settings),
        None,
        "Broker defaults for replication factors (-1).",
        *settings_entries(flow, Section.REPLICATION_FACTORS, settings),
        *capacity_entries(flow),
    ]
    return entries


def capacity_entries(flow: Flow) -> list[Entry]:
    """A flow with `capacity` (model/capacity.py sized it): its tasks, and how its nodes are run. None without."""
    sized = flow.capacity
    if sized is None:
        return []
    return [
        None,
        f"Capacity (capacity.yaml): {sized.catch_up_bytes_per_second} bytes/s to catch up, over {sized.tasks} "
        f"task(s) on {sized.nodes} node(s).",
        f"Run this file on each of the {sized.nodes} node(s), with a {sized.heap} heap:",
        f"  java -Xms{sized.heap} -Xmx{sized.heap} -cp 'libs/*' org.apache.kafka.connect.mirror.MirrorMaker "
        "<this file>",
        f"Its principal's quotas hold it to that rate: {sized.source_fetch_byte_rate} bytes/s fetched on each "
        f"{flow.source} broker, {sized.target_produce_byte_rate} produced on each {flow.target} broker.",
        (f"{flow.source}->{flow.target}.tasks.max", str(sized.tasks)),
    ]


def topics_exclude(exclude_topics: Sequence[str]) -> str:
    """A flow's `topics.exclude`: mm2gov's exclusions first, then the tenant's `exclude_topics` (legacy
    blacklists land there through `mm2gov import`). A tenant can only add: the list is never the tenant's alone,
    so no exclude of its own can bring internal or other flows' topics back."""
    return ",".join([TOPICS_EXCLUDE, *exclude_topics])


def groups_exclude(exclude_groups: Sequence[str]) -> str:
    """A flow's `groups.exclude` when its tenant narrows the groups: MM2's default list, then its own."""
    return ",".join([GROUPS_EXCLUDE, *exclude_groups])


def settings_entries(flow: Flow, section: Section,
                     settings: Sequence[mm2_settings.Setting] | None = None) -> list[Entry]:
    """The flow's entries of the settings table (model/mm2_settings.py) in one section of the file, each
    under its comment lines and with its key scoped as the table says. `settings`: the flow's
    (mm2_settings.for_flow), when the caller has them."""
    entries: list[Entry] = []
    for setting in mm2_settings.for_flow(flow) if settings is None else settings:
        if setting.properties is not None and setting.properties.section is section:
            entries += [*setting.properties.comment,
                        (setting.properties_key(flow.source, flow.target), str(setting.value))]
    return entries


def exactly_once_entries(flow: Flow, settings: Sequence[mm2_settings.Setting] | None = None) -> list[Entry]:
    """KIP-618 in dedicated mode, for `delivery: exactly_once` flows only (none for at_least_once).

    The target worker commits each polled batch with its source offsets in one transaction, under the
    flow's own transactional ids (names.mm2_transactional_ids, granted by acls.mm2_scope); the source
    consumer reads committed records only, or aborted ones would be copied (MirrorSourceConnector says
    it supports exactly-once only then). Followers forward task configs and fencing to the leader over
    MM2's internal REST server (KIP-710: `internal_rest_entries`). The keys are the table's (Section.EXACTLY_ONCE).
    """
    if not flow.exactly_once:
        return []
    ids = flow.transactional_ids
    return [
        None,
        "Exactly-once delivery (KIP-618): each batch and its source offsets commit in one transaction on",
        f"the target, as transactional ids {ids.tasks}<connector>-<task> and {ids.leader}.",
        "Consumers of the remote topics must read with isolation.level=read_committed.",
        *settings_entries(flow, Section.EXACTLY_ONCE, settings),
    ]


def internal_rest_entries(flow: Flow, settings: Sequence[mm2_settings.Setting] | None = None) -> list[Entry]:
    """KIP-710's internal REST server, for a flow run by several nodes or exactly once (Flow.internal_rest):
    its followers reach the leader through it. After the exactly-once entries, which already say why."""
    if not flow.internal_rest:
        return []
    why: list[Entry] = [] if flow.exactly_once else [
        None, f"{flow.nodes} nodes run this flow as one Connect group: followers reach the leader through"
              " its internal REST server (KIP-710)."]
    return [*why, *settings_entries(flow, Section.INTERNAL_REST, settings)]


def flow_properties(tenant: str, flow: Flow, clusters: Mapping[str, Cluster], secrets_path: str,
                    header: str) -> str:
    return render(flow_entries(tenant, flow, clusters, secrets_path, header))


def compile_flows(tenancy: Tenancy, clusters: Mapping[str, Cluster], secrets_path: str,
                  header: str) -> list[Mm2Flow]:
    return [Mm2Flow(flow.id, tenant.tenant, flow.source, flow.target,
                    partial(flow_properties, tenant.tenant, flow, clusters, secrets_path, header))
            for tenant in sorted(tenancy, key=lambda t: t.tenant) for flow in tenant.flows]


def tenant_of(properties_text: str) -> str:
    """The tenant a generated MM2 properties file belongs to (from the line mm2gov writes in it)."""
    for line in properties_text.splitlines():
        if line.startswith(TENANT_LINE_PREFIX):
            return line[len(TENANT_LINE_PREFIX):].split(",", 1)[0]
    raise ValueError("not a properties file generated by mm2gov")
