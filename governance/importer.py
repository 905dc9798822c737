"""`mm2gov import`: an existing MM2 properties file -> the governance repo it corresponds to.

Pure: text in, (clusters.yaml data, tenant data, warnings) out. Secret values
are never copied: an inline password becomes a warning that names the secret
to create instead.

Legacy files are often written for Kafka 3.x. Its MM2 keys that Kafka 4 removed (connect-mirror 3.9.2's
config names against 4.3.1's) are translated or flagged: the `*.blacklist` aliases (KAFKA-17529: 4.x
ignores them silently, so a 3.x exclusion would simply vanish) become the flow's `exclude_topics` /
`exclude_groups`, resolved as Kafka 3.x resolves them (`legacy_exclude`); the others get a warning
saying what Kafka 4 does instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import javaproperties

from governance.compile.mm2 import GROUPS_EXCLUDE, TOPICS_EXCLUDE
from governance.config.regex import RegexProblem, analyse, java_list_matcher, split_list

SEPARATORS = (".", "-", "_")
# Keys whose values are credentials, however they are spelled (case, '_'/'-' for '.', a
# `<alias>.` or `<pair>.` prefix, \\uXXXX escapes, which `javaproperties` decodes first):
# passwords, JAAS lines of any login module, OAuth client secrets, tokens, Schema Registry
# `basic.auth.user.info`, private keys and key stores' key material.
SECRET_KEY = re.compile(r"(pass(word)?|passwd|pwd|secret|jaas|token|credential|user\.info|private|"
                        r"(^|\.)key$|api\.?key|assertion)")


# Kafka 3.x's deprecated aliases, removed by Kafka 4 (KAFKA-17529): 3.x read them when the new key was unset.
BLACKLISTS = {"topics": "topics.blacklist", "groups": "groups.blacklist"}
CONFIG_PROPERTIES_KEYS = ("config.properties.blacklist", "config.properties.exclude")
# The other MM2 keys Kafka 3.9 knows and 4.x does not (its ConfigDefs, compared by
# tests/integration/test_mm2_upgrade_keys.py), and what 4.x does instead.
REMOVED_IN_KAFKA_4 = {
    "use.incremental.alter.configs": "Kafka 4's MM2 always syncs topic configs with IncrementalAlterConfigs "
                                     "(brokers 2.3+)",
    "add.source.alias.to.metrics": "Kafka 4's MM2 always tags its replication metrics with the source alias",
    "auto.include.jmx.reporter": "Kafka 4 adds no JmxReporter by itself; mm2gov's flows name it in "
                                 "metric.reporters",
}
# The defaults of Kafka 3.x's topics.exclude and groups.exclude as a properties file copied from its docs
# reads (java.util.Properties turns `[\-\.]` into `[-.]`, outside mm2gov's regex grammar): mm2gov's own
# exclusions hold them already.
HELD_BY_DEFAULT = {"topics": (".*[-.]internal", ".*[-\\.]internal", ".*[\\-.]internal"), "groups": ()}


def is_secret_key(key: str) -> bool:
    return bool(SECRET_KEY.search(re.sub(r"[_\-\s]+", ".", key.lower())))


@dataclass
class Imported:
    clusters: dict[str, Any]
    tenant: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def parse_properties(text: str) -> dict[str, str]:
    """A .properties text exactly as `java.util.Properties.load` reads it (escapes, \\uXXXX in keys
    and values, continuations, `=`/`:`/whitespace separators, `#`/`!` comments), through the
    `javaproperties` library rather than by hand; the last of repeated keys wins, as in Java."""
    return dict(javaproperties.loads(text))


def read_properties_file(path: Path) -> str:
    """A legacy file as `Utils.loadProps` reads it: bytes as ISO-8859-1 (non-Latin-1 text only as \\uXXXX)."""
    return path.read_bytes().decode("iso-8859-1")


REDACTED = "<redacted>"
_REFERENCE = re.compile(r"\$\{[^{}]*\}")
# `name="value"` options of a JAAS line (any login module), and a URL's user-info (`scheme://user:pass@host`)
_JAAS_OPTION = re.compile(r'([A-Za-z0-9_.-]+)\s*=\s*"((?:[^"\\]|\\.)*)"')
_URL_USER_INFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/@\s]+)@")


def _secret_parts(key: str, value: str) -> list[str]:
    """The secret values in one key's value: the secret options of a JAAS line, else the whole value of a
    secret-like key; and every URL's user-info."""
    parts = [m.group(1) for m in _URL_USER_INFO.finditer(value)]
    if is_secret_key(key):
        options = [v for name, v in _JAAS_OPTION.findall(value) if is_secret_key(name)]
        inline = [v for v in options if not _is_reference(v)]
        # a JAAS line is a secret when one of its secret options is (then all of the line); else the whole value
        parts += ([*inline, value] if inline else []) if options else [value]
    return [part for part in parts if not _is_reference(part)]


def _is_reference(value: str) -> bool:
    """Empty, or only `${provider:path:key}` references: nothing secret in the text itself."""
    return not _REFERENCE.sub("", value).strip()


def legacy_secrets(text: str) -> set[str]:
    """Every secret value a legacy file holds, however it is read. java.util.Properties joins a line ending in
    an odd number of `\\` with the next one, so a password line can become part of `clusters=`, a topics list
    or a blacklist, under a key that is not secret-like: the file is read as Java reads it and each physical
    line on its own, and every value of a secret-like key (a JAAS line's secret options, URL user-info) in
    either reading is a secret, to be redacted by value from everything mm2gov prints or writes."""
    found: set[str] = set()
    readings = [parse_properties(text)]
    readings += [parse_properties(line) for line in re.split(r"\r\n|\r|\n", text)]
    for reading in readings:
        for key, value in reading.items():
            found.update(_secret_parts(key, value))
    return found


def redact(text: str, secrets: set[str]) -> str:
    """`text` with every secret value in it replaced (longest first, so no part of one survives)."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def _inline(key: str, value: str) -> bool:
    """A secret-like key (or a URL in any key) holds a value rather than only `${...}` references."""
    return bool(_secret_parts(key, value))


def _prefix_for(regex: str) -> tuple[str, str | None]:
    """(tenant prefix, rewritten regex or None): the prefix is the literal text up to its last separator."""
    try:
        literal = analyse(regex).alternatives[0].literal_prefix
    except RegexProblem:
        literal = ""
    cut = max(literal.rfind(sep) for sep in SEPARATORS)
    if cut > 0:
        return literal[: cut + 1], None
    if literal and len(analyse(regex).alternatives) == 1:
        return f"{literal}.", f"{re.escape(literal)}\\..*"
    return "", None


def _shown_key(key: str) -> str:
    """A key as a warning may show it: printable ASCII (others as \\uXXXX), at most 100 characters."""
    shown = javaproperties.escape(key)
    return shown if len(shown) <= 100 else f"{shown[:97]}..."


def legacy_exclude(props: dict[str, str], pair: str, kind: str) -> tuple[str, str] | None:
    """(key, value) of the exclusions Kafka 3.x's MM2 applied to `kind` (topics | groups) for `pair`, or None
    for its default. MirrorMakerConfig gives each connector the top-level keys overridden by the `<pair>.`
    ones; the filter then reads `<kind>.exclude`, and only when that is unset its `<kind>.blacklist` alias."""
    for name in (f"{kind}.exclude", BLACKLISTS[kind]):
        for key in (f"{pair}.{name}", name):
            if key in props:
                return key, props[key]
    return None


@dataclass(frozen=True)
class Carried:
    """A pair's legacy exclusions of one kind as the imported flow holds them."""

    items: list[str]  # added to mm2gov's own exclusions
    warnings: list[str]
    refused: bool = False  # an item cannot be carried: importing the flow would replicate more than legacy


def carried_exclude(props: dict[str, str], pair: str, kind: str) -> Carried:
    """The legacy exclusions of `pair` the flow must add to mm2gov's own. mm2gov's list already holds
    Kafka 3.x's default and any exact name it matches; an item outside mm2gov's regex grammar cannot be
    carried, and then the flow is not imported (fail closed: it would replicate what legacy excluded)."""
    found = legacy_exclude(props, pair, kind)
    if found is None:
        return Carried([], [])
    key, value = found
    always = split_list(TOPICS_EXCLUDE if kind == "topics" else GROUPS_EXCLUDE)
    held = java_list_matcher(always)
    carried, problems = [], []
    for item in (i for i in split_list(value) if i):
        if item in always or item in HELD_BY_DEFAULT[kind]:
            continue
        try:
            alternatives = analyse(item).alternatives
        except RegexProblem as exc:
            problems.append(f"{_shown_key(key)}: '{item}' cannot be carried into exclude_{kind} ({exc})")
            continue
        if all(alt.exact and held(alt.literal_prefix) for alt in alternatives):
            continue  # names mm2gov excludes anyway (e.g. __consumer_offsets)
        carried.append(item)
    warnings = []
    if key.endswith("blacklist") and carried:
        warnings.append(f"{_shown_key(key)}: translated for Kafka 4 (which ignores it): {pair}'s flow gets "
                        f"exclude_{kind} {carried}, generated as {kind}.exclude after mm2gov's own exclusions")
    return Carried(carried, warnings + problems, refused=bool(problems))


def _unscoped(key: str, aliases: list[str]) -> str:
    """`key` without a `<source>-><target>.` prefix of two of the file's aliases (MM2's pair scoping)."""
    for source in aliases:
        for target in aliases:
            if key.startswith(f"{source}->{target}."):
                return key[len(f"{source}->{target}."):]
    return key


def import_properties(text: str, tenant_name: str = "imported") -> Imported:
    read = parse_properties(text)
    secrets = legacy_secrets(text)
    inline = {key for key, value in read.items() if _inline(key, value)}
    for line in re.split(r"\r\n|\r|\n", text):  # a secret line joined into another key by a trailing `\`
        inline |= {key for key, value in parse_properties(line).items() if _inline(key, value) and key not in read}
    warnings = [f"{_shown_key(redact(key, secrets))}: inline secret (value not shown); store it in a Secret and "
                "reference it (mm2gov generates ${dir:...} references)"
                + ("" if key in read else "; the line before it ends in '\\', so Java reads it as part of that "
                                          "key's value")
                for key in sorted(inline)]
    # From here on no secret value exists, by key or by value, so none can be echoed or written.
    props = {redact(key, secrets): "" if is_secret_key(key) else redact(value, secrets) for key, value in read.items()}
    aliases = [a for a in split_list(props.get("clusters", "")) if a]
    if len(aliases) < 2:
        raise ValueError("no 'clusters=' line with at least two aliases: not an MM2 properties file")
    for key in sorted(props):
        bare = _unscoped(key, aliases)
        if bare in BLACKLISTS.values():
            warnings.append(f"{_shown_key(key)}: removed in Kafka 4 (KAFKA-17529), silently ignored there; "
                            f"mm2gov imports it as the flow's exclude_{bare.split('.')[0]}")
        elif bare in CONFIG_PROPERTIES_KEYS:
            warnings.append(f"{_shown_key(key)}: not imported: mm2gov's flows keep MM2's default "
                            "config.properties.exclude, so topic configs this file held back will be synced"
                            + (" (and Kafka 4 removed this key, KAFKA-17529)" if bare.endswith("blacklist") else ""))
        elif bare in REMOVED_IN_KAFKA_4:
            warnings.append(f"{_shown_key(key)}: removed in Kafka 4, not imported: {REMOVED_IN_KAFKA_4[bare]}")
        elif bare.endswith(".whitelist"):
            warnings.append(f"{_shown_key(key)}: not a MirrorMaker 2 key (MM2 ignores it in 3.x and 4.x; "
                            "MirrorMaker 1's --whitelist is MM2's topics); not imported")
    acl_sync = [k for k in props if k.endswith("sync.topic.acls.enabled") and props[k].lower() != "false"]
    if "sync.topic.acls.enabled" not in props or acl_sync:
        warnings.append("sync.topic.acls.enabled: on (the default): MM2 copies LITERAL topic ACLs to the same "
                        "principal on the other cluster and never revokes them; mm2gov turns it off")
    clusters: dict[str, Any] = {}
    for alias in aliases:
        protocol = props.get(f"{alias}.security.protocol", props.get("security.protocol", "PLAINTEXT"))
        security: dict[str, Any] = {"protocol": protocol}
        if protocol.startswith("SASL"):
            security["sasl_mechanism"] = props.get(f"{alias}.sasl.mechanism", props.get("sasl.mechanism", "PLAIN"))
        if protocol.endswith("SSL"):
            security["ca_secret"] = f"{alias}-cluster-ca"
        security["admin_credentials_secret"] = f"{alias}-admin"
        if protocol in ("PLAINTEXT", "SASL_PLAINTEXT"):
            warnings.append(f"{alias}.security.protocol: {protocol} sends records (and credentials) unencrypted")
        clusters[alias] = {"bootstrap_servers": props.get(f"{alias}.bootstrap.servers", ""),
                           "zone": "cloud" if "cloud" in alias else "onprem", "security": security}
    flows, prefixes, group_prefixes = [], [], []
    policy = "identity" if "Identity" in props.get("replication.policy.class", "") else "default"
    for source in aliases:
        for target in aliases:
            pair = f"{source}->{target}"
            if source == target or props.get(f"{pair}.enabled", "false").lower() != "true":
                continue
            topics = [t for t in split_list(props.get(f"{pair}.topics", props.get("topics", ".*"))) if t]
            groups = [g for g in split_list(props.get(f"{pair}.groups", props.get("groups", ".*"))) if g]
            flow_topics = []
            for regex in topics:
                if regex in (".*", ".+"):
                    warnings.append(f"{pair}.topics: '{regex}' replicates every topic of every tenant; "
                                    "name the tenant's topics instead")
                    continue
                prefix, rewritten = _prefix_for(regex)
                if not prefix:
                    warnings.append(f"{pair}.topics: '{regex}' has no fixed prefix to scope a tenant by; left out")
                    continue
                if rewritten:
                    warnings.append(f"{pair}.topics: topic '{regex}' has no tenant prefix ending in a separator; "
                                    f"imported as '{rewritten}' under prefix '{prefix}': rename the topic "
                                    f"(e.g. to '{prefix}main') before moving this flow to mm2gov")
                prefixes.append(prefix)
                flow_topics.append(rewritten or regex)
            if any(g in (".*", ".+") for g in groups):
                warnings.append(f"{pair}.groups: '.*' mirrors every consumer group, other tenants' included; "
                                f"imported as '{tenant_name}-.*'")
            flow_groups = [f"{re.escape(tenant_name)}-.*"]
            group_prefixes.append(f"{tenant_name}-")
            excludes = {kind: carried_exclude(props, pair, kind) for kind in ("topics", "groups")}
            for carried in excludes.values():
                warnings.extend(carried.warnings)
            if any(carried.refused for carried in excludes.values()):
                warnings.append(f"{pair}: flow left out: it would replicate what the legacy MM2 excluded; "
                                "rewrite the exclusion inside mm2gov's regex grammar (docs/policies.md)")
                continue
            if flow_topics:
                flows.append({"source": source, "target": target, "topics": flow_topics, "groups": flow_groups,
                              **{f"exclude_{kind}": c.items for kind, c in excludes.items() if c.items},
                              "replication_policy": policy})
    tenant = {
        "name": tenant_name,
        "owners": ["owner@example.com"],
        "classification": "internal",
        "topic_prefixes": sorted(set(prefixes)) or [f"{tenant_name}."],
        "group_prefixes": sorted(set(group_prefixes)) or [f"{tenant_name}-"],
        "principals": [],
        "flows": flows,
    }
    warnings.append("owners, classification and principals are placeholders: fill them in")
    return Imported({"clusters": clusters}, tenant, warnings)
