"""MirrorMaker 2's naming of remote topics, as its replication policies do it."""

from __future__ import annotations

DEFAULT_SEPARATOR = "."


def remote_name(replication_policy: str, source_alias: str, name: str) -> str:
    """`DefaultReplicationPolicy`: '<source>.<name>'; `IdentityReplicationPolicy`: the name itself."""
    if replication_policy == "identity":
        return name
    return f"{source_alias}{DEFAULT_SEPARATOR}{name}"
