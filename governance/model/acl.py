"""ACL bindings in the shape of CONTRACT.md (`OUT/acls/<cluster>.json`, plans, audit input)."""

from __future__ import annotations

from typing import Literal, NamedTuple

ResourceType = Literal["TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"]
PatternType = Literal["LITERAL", "PREFIXED"]
Operation = Literal[
    "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
    "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
]
Permission = Literal["ALLOW", "DENY"]


class AclBinding(NamedTuple):
    """One ACL binding. A NamedTuple: compiled estates hold hundreds of thousands, hashed and compared."""

    principal: str
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    operation: Operation
    permission: Permission = "ALLOW"
    host: str = "*"

    def to_record(self) -> dict[str, str]:
        """The contract's JSON shape, keys in the documented order."""
        order = ("principal", "host", "resource_type", "resource_name", "pattern_type", "operation", "permission")
        return {key: getattr(self, key) for key in order}

    @classmethod
    def from_record(cls, record: dict[str, str]) -> AclBinding:
        return cls(**record)  # type: ignore[arg-type]
