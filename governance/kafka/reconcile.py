"""Live vs desired on one cluster, for owned principals only. Pure: no I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field

from governance.model.acl import AclBinding
from governance.secrets.names import user_name


@dataclass(frozen=True)
class ClusterSnapshot:
    cluster: str
    bindings: frozenset[AclBinding]
    scram_users: frozenset[str]
    owned_principals: frozenset[str]
    topics: frozenset[str] = frozenset()


@dataclass
class ClusterChanges:
    cluster: str
    delete_acls: list[AclBinding] = field(default_factory=list)
    create_acls: list[AclBinding] = field(default_factory=list)
    delete_users: list[str] = field(default_factory=list)  # principals
    create_users: list[str] = field(default_factory=list)  # principals
    create_topics: list[tuple[str, int]] = field(default_factory=list)  # (remote topic, partitions); never deleted
    foreign: list[AclBinding] = field(default_factory=list)  # neighbours' bindings: reported, never touched
    seconds: dict[str, float] = field(default_factory=dict)  # phase -> wall time, filled in by apply

    @property
    def count(self) -> int:
        return (len(self.delete_acls) + len(self.create_acls) + len(self.delete_users) + len(self.create_users)
                + len(self.create_topics))

    def to_record(self) -> dict[str, object]:
        return {"cluster": self.cluster,
                "delete_acls": [b.to_record() for b in self.delete_acls],
                "create_acls": [b.to_record() for b in self.create_acls],
                "delete_users": self.delete_users, "create_users": self.create_users,
                "create_topics": [{"topic": t, "partitions": n} for t, n in self.create_topics],
                "foreign_acls": [b.to_record() for b in self.foreign]}


def reconcile(cluster: str, desired: set[AclBinding], principals: set[str], live: ClusterSnapshot,
              topics: dict[str, int] | None = None) -> ClusterChanges:
    """What to delete and create so the owned part of `live` equals `desired`.

    Removals come first in the plan (apply runs them first), so access is never
    wider than the old or the new state while a principal moves.
    """
    owned = set(live.owned_principals) | principals
    live_owned = {b for b in live.bindings if b.principal in owned}
    stale_principals = set(live.owned_principals) - principals
    return ClusterChanges(
        cluster=cluster,
        delete_acls=sorted(live_owned - desired),
        create_acls=sorted(desired - live.bindings),
        delete_users=sorted(p for p in stale_principals if user_name(p) in live.scram_users),
        create_users=sorted(p for p in principals if user_name(p) not in live.scram_users),
        foreign=sorted(b for b in live.bindings if b.principal not in owned),
        create_topics=sorted((name, n) for name, n in (topics or {}).items() if name not in live.topics),
    )
