"""What `apply` changed (or would, with --dry-run) and what `drift` found: per cluster the ACLs,
SCRAM users, topics and client quotas, the Kubernetes objects mm2gov owns, and certificates that need
attention."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from governance.k8s.strimzi_apply import KubeChanges
    from governance.kafka.reconcile import ClusterChanges
    from governance.model.acl import AclBinding
    from governance.secrets.expiry import CertStatus


def as_json(results: list[ClusterChanges], kube: KubeChanges | None = None) -> str:
    document: dict[str, object] = {"clusters": [c.to_record() for c in results],
                                   "changes": sum(c.count for c in results) + (kube.count if kube else 0)}
    if kube is not None:
        document["kubernetes"] = kube.to_record()
    return json.dumps(document, indent=2) + "\n"


def text(results: list[ClusterChanges], verb: str, kube: KubeChanges | None = None) -> str:
    """One line per change, `+` added, `-` removed, `~` updated (a quota: its keys mm2gov owns, before ->
    after), `!` a neighbour's ACL left alone;
    `verb` says what the counts are ("applied", "planned (dry run)", "of drift")."""
    out = []
    if kube is not None:
        out.append(f"kubernetes: {kube.count} change(s) {verb}")
        for label, names in (("+", kube.created), ("~", kube.updated), ("-", kube.deleted)):
            out += [f"  {label} {name}" for name in names]
    for changes in results:
        out.append(f"{changes.cluster}: {changes.count} change(s) {verb}")
        out += [f"  - ACL {_binding(b)}" for b in changes.delete_acls]
        out += [f"  - SCRAM user {principal}" for principal in changes.delete_users]
        out += [f"  + SCRAM user {principal}" for principal in changes.create_users]
        out += [f"  + topic {topic} ({partitions} partitions, as its source topic)"
                for topic, partitions in changes.create_topics]
        out += [f"  {q.sign} quota {q.phrase()}" for q in changes.quotas]
        out += [f"  + ACL {_binding(b)}" for b in changes.create_acls]
        out += [f"  ! foreign ACL left alone: {b.principal} {b.permission} {b.operation} "
                f"{b.resource_type} {b.pattern_type} {b.resource_name}" for b in changes.foreign]
    return "".join(line + "\n" for line in out)


def _binding(b: AclBinding) -> str:
    return f"{b.principal} {b.operation} {b.resource_type} {b.pattern_type} {b.resource_name}"


def drift_json(results: list[ClusterChanges], certificates: list[CertStatus]) -> str:
    return json.dumps({"clusters": [c.to_record() for c in results],
                       "changes": sum(c.count for c in results),
                       "certificates": [c.to_record() for c in certificates]}, indent=2) + "\n"


def drift_text(results: list[ClusterChanges], certificates: list[CertStatus]) -> str:
    """The drift of each cluster, then the certificates that are missing, expired or expiring."""
    attention = [c for c in certificates if c.needs_attention]
    out = [f"certificates: {len(certificates)} checked, {len(attention)} need attention"]
    for cert in attention:
        when = f", not after {cert.not_after} ({cert.days_left} days)" if cert.not_after else ""
        out.append(f"  ! {cert.status} {cert.secret}/{cert.key}{when}")
    return text(results, "of drift") + "\n".join(out) + "\n"
