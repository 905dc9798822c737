"""`mm2gov import`: an existing MM2 properties file -> the governance repo it corresponds to.

Pure: text in, (clusters.yaml data, tenant data, warnings) out. Secret values
are never copied: an inline password becomes a warning that names the secret
to create instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import javaproperties

from governance.config.regex import RegexProblem, analyse, split_list

SEPARATORS = (".", "-", "_")
# Keys whose values are credentials, however they are spelled (case, '_'/'-' for '.', a
# `<alias>.` or `<pair>.` prefix, \\uXXXX escapes, which `javaproperties` decodes first):
# passwords, JAAS lines of any login module, OAuth client secrets, tokens, Schema Registry
# `basic.auth.user.info`, private keys and key stores' key material.
SECRET_KEY = re.compile(r"(pass(word)?|passwd|pwd|secret|jaas|token|credential|user\.info|private|"
                        r"(^|\.)key$|api\.?key|assertion)")


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


def _is_reference(value: str) -> bool:
    return "${" in value


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


def import_properties(text: str, tenant_name: str = "imported") -> Imported:
    read = parse_properties(text)
    warnings = [f"{_shown_key(key)}: inline secret (value not shown); store it in a Secret and reference it "
                "(mm2gov generates ${dir:...} references)"
                for key, value in sorted(read.items()) if is_secret_key(key) and value and not _is_reference(value)]
    # From here on no value of a secret-like key exists, so none can be echoed or written.
    props = {key: "" if is_secret_key(key) else value for key, value in read.items()}
    aliases = [a for a in split_list(props.get("clusters", "")) if a]
    if len(aliases) < 2:
        raise ValueError("no 'clusters=' line with at least two aliases: not an MM2 properties file")
    for key in sorted(props):
        if key.endswith(("topics.blacklist", "groups.blacklist")):
            warnings.append(f"{_shown_key(key)}: removed in Kafka 4 (KAFKA-17529), silently ignored there; "
                            f"use {_shown_key(key.replace('blacklist', 'exclude'))}")
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
            if flow_topics:
                flows.append({"source": source, "target": target, "topics": flow_topics, "groups": flow_groups,
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
