"""`mm2gov import`: an existing MM2 properties file -> the governance repo it corresponds to.

Pure: text in, (clusters.yaml data, tenant data, warnings) out. Secret values
are never copied: an inline password becomes a warning that names the secret
to create instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from governance.config.regex import RegexProblem, analyse

SEPARATORS = (".", "-", "_")
SECRET_KEY = re.compile(r"(password|secret|jaas\.config|token|key)$", re.IGNORECASE)


@dataclass
class Imported:
    clusters: dict[str, Any]
    tenant: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def parse_properties(text: str) -> dict[str, str]:
    """Java .properties: `key=value` or `key: value`, `#`/`!` comments, backslash continuations."""
    props: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        match = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", logical)
        if match:
            props[match.group(1)] = match.group(2).strip()
        logical = ""
    return props


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


def import_properties(text: str, tenant_name: str = "imported") -> Imported:
    props = parse_properties(text)
    warnings: list[str] = []
    aliases = [a.strip() for a in props.get("clusters", "").split(",") if a.strip()]
    if len(aliases) < 2:
        raise ValueError("no 'clusters=' line with at least two aliases: not an MM2 properties file")
    for key, value in sorted(props.items()):
        inline = SECRET_KEY.search(key) and value and not _is_reference(value)
        if inline and ("jaas.config" not in key or "password" in value):
            warnings.append(f"{key}: inline secret (value not shown); store it in a Secret and reference it "
                                "(mm2gov generates ${dir:...} references)")
        if key.endswith(("topics.blacklist", "groups.blacklist")):
            warnings.append(f"{key}: removed in Kafka 4 (KAFKA-17529), silently ignored there; "
                            f"use {key.replace('blacklist', 'exclude')}")
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
            topics = [t.strip() for t in props.get(f"{pair}.topics", props.get("topics", ".*")).split(",") if t]
            groups = [g.strip() for g in props.get(f"{pair}.groups", props.get("groups", ".*")).split(",") if g]
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
