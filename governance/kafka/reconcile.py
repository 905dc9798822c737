"""Live vs desired on one cluster, for owned principals only. Pure: no I/O here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from governance.model.acl import AclBinding
from governance.model.quota import ClientQuota, QuotaChange
from governance.secrets.names import user_name


@dataclass(frozen=True)
class ClusterSnapshot:
    cluster: str
    bindings: frozenset[AclBinding]
    scram_users: frozenset[str]
    owned_principals: frozenset[str]
    topics: frozenset[str] = frozenset()
    # principal ("User:...") -> every quota key set on its `user` entity (mm2gov's and any other)
    quotas: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


@dataclass
class ClusterChanges:
    cluster: str
    delete_acls: list[AclBinding] = field(default_factory=list)
    create_acls: list[AclBinding] = field(default_factory=list)
    delete_users: list[str] = field(default_factory=list)  # principals
    create_users: list[str] = field(default_factory=list)  # principals
    create_topics: list[tuple[str, int]] = field(default_factory=list)  # (remote topic, partitions); never deleted
    foreign: list[AclBinding] = field(default_factory=list)  # neighbours' bindings: reported, never touched
    quotas: list[QuotaChange] = field(default_factory=list)  # owned principals' owned keys set or removed
    seconds: dict[str, float] = field(default_factory=dict)  # phase -> wall time, filled in by apply

    @property
    def count(self) -> int:
        return (len(self.delete_acls) + len(self.create_acls) + len(self.delete_users) + len(self.create_users)
                + len(self.create_topics) + len(self.quotas))

    def to_record(self) -> dict[str, object]:
        return {"cluster": self.cluster,
                "delete_acls": [b.to_record() for b in self.delete_acls],
                "create_acls": [b.to_record() for b in self.create_acls],
                "delete_users": self.delete_users, "create_users": self.create_users,
                "create_topics": [{"topic": t, "partitions": n} for t, n in self.create_topics],
                "quotas": [q.to_record() for q in self.quotas],
                "foreign_acls": [b.to_record() for b in self.foreign]}


def reconcile(cluster: str, desired: set[AclBinding], principals: set[str], live: ClusterSnapshot,
              topics: dict[str, int] | None = None,
              quotas: Mapping[str, ClientQuota] | None = None) -> ClusterChanges:
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
        quotas=reconcile_quotas(cluster, quotas or {}, owned, live.quotas),
    )


def reconcile_quotas(cluster: str, desired: Mapping[str, ClientQuota], owned: set[str],
                     live: Mapping[str, Mapping[str, float]]) -> list[QuotaChange]:
    """Per principal mm2gov owns (or sets a quota for), the change that makes its owned keys (QUOTA_KEYS) on
    the brokers equal the desired ones: missing or different keys set, keys the repo no longer sets removed.
    A neighbour's quota and the keys mm2gov does not own (controller_mutation_rate) are never in a change."""
    changes = []
    for principal in sorted((owned & set(live)) | set(desired)):
        before = ClientQuota.from_values(live.get(principal, {}))
        after = desired.get(principal, ClientQuota())
        if before != after:
            changes.append(QuotaChange(cluster, principal, before or None, after or None))
    return changes
