"""The stack's Kafka clusters back to what `Stack.up()` made of them, for a module whose claim is about the
whole cluster.

The audit reads every topic, ACL, SCRAM user and group a cluster has: "a clean deployment has no finding"
can only be asked of a cluster that holds the deployment and nothing else. Modules before it on the same
worker (any of them, in any order: `make test-random`) leave their tenants' state behind, which the audit
rightly reports. Each worker has its own stack and runs one module at a time, and pytest has torn the
previous module's fixtures down before the next module's start, so nothing is using what this removes.
"""

from __future__ import annotations

from dataclasses import dataclass

from devstack.kafka import ADMIN_USER
from devstack.stack import Stack
from governance.kafka.admin import TIMEOUT, admin_client, delete_acls, delete_scram_users, describe_acls, scram_users


@dataclass(frozen=True)
class Cleared:
    topics: int
    acls: int
    users: int
    groups: int


def clear_kafka(stack: Stack) -> dict[str, Cleared]:
    """Delete every topic (Kafka's own `__` topics kept), ACL, SCRAM user (the stack's admin kept) and
    consumer group of every cluster of the stack; what was deleted, per cluster."""
    cleared = {}
    for alias, cluster in stack.kafka.items():
        admin = admin_client(cluster.admin_config())
        groups = [g.group_id for g in admin.list_consumer_groups(request_timeout=TIMEOUT).result(timeout=TIMEOUT).valid]
        for future in (admin.delete_consumer_groups(groups, request_timeout=TIMEOUT).values() if groups else ()):
            future.result(timeout=TIMEOUT)
        topics = [t for t in admin.list_topics(timeout=TIMEOUT).topics if not t.startswith("__")]
        for future in (admin.delete_topics(topics, operation_timeout=TIMEOUT).values() if topics else ()):
            future.result(timeout=TIMEOUT)
        acls = describe_acls(admin)
        delete_acls(admin, acls)
        users = scram_users(admin) - {ADMIN_USER}
        delete_scram_users(admin, users)
        cleared[alias] = Cleared(len(topics), len(acls), len(users), len(groups))
    return cleared
