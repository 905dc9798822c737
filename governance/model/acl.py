"""ACL bindings in the shape of CONTRACT.md (`OUT/acls/<cluster>.json`, plans, audit input)."""

from __future__ import annotations

from typing import Literal, NamedTuple, cast, get_args

ResourceType = Literal["TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"]
PatternType = Literal["LITERAL", "PREFIXED"]
Operation = Literal[
    "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
    "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
]
Permission = Literal["ALLOW", "DENY"]
# What librdkafka calls a value it has no name for (an ACL on a resource type or with an operation it does
# not know): a binding read from a broker (kafka/admin.py) keeps it as read, so a plan still lists the ACL
# and the audit still sees it. mm2gov never grants one.
Unknown = Literal["UNKNOWN"]
UNKNOWN: Unknown = "UNKNOWN"


class AclBinding(NamedTuple):
    """One ACL binding. A NamedTuple: compiled estates hold hundreds of thousands, hashed and compared."""

    principal: str
    resource_type: ResourceType | Unknown
    resource_name: str
    pattern_type: PatternType | Unknown
    operation: Operation | Unknown
    permission: Permission | Unknown = "ALLOW"
    host: str = "*"

    def to_record(self) -> dict[str, str]:
        """The contract's JSON shape, keys in the documented order."""
        order = ("principal", "host", "resource_type", "resource_name", "pattern_type", "operation", "permission")
        return {key: getattr(self, key) for key in order}


def _named(name: str, names: tuple[str, ...], what: str) -> str:
    """`name` when a binding may hold it. confluent-kafka's AclBinding already refuses the names only a filter
    holds (ANY, MATCH), so every binding a broker returns passes."""
    if name != UNKNOWN and name not in names:
        raise ValueError(f"{name!r} is no ACL binding's {what} (one of {', '.join(names)}, or {UNKNOWN})")
    return name


def as_resource_type(name: str) -> ResourceType | Unknown:
    """`name` as a binding's resource type, checked: a ValueError for any other name (a filter's ANY)."""
    return cast("ResourceType | Unknown", _named(name, get_args(ResourceType), "resource type"))


def as_pattern_type(name: str) -> PatternType | Unknown:
    """`name` as a binding's pattern type, checked: a ValueError for any other name (a filter's ANY, MATCH)."""
    return cast("PatternType | Unknown", _named(name, get_args(PatternType), "pattern type"))


def as_operation(name: str) -> Operation | Unknown:
    """`name` as a binding's operation, checked: a ValueError for any other name (a filter's ANY)."""
    return cast("Operation | Unknown", _named(name, get_args(Operation), "operation"))


def as_permission(name: str) -> Permission | Unknown:
    """`name` as a binding's permission, checked: a ValueError for any other name (a filter's ANY)."""
    return cast("Permission | Unknown", _named(name, get_args(Permission), "permission"))
