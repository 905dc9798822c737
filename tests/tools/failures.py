"""What the failure-path tests set up: a port nothing listens on, and a cluster admin the brokers refuse one
operation on the cluster."""

from __future__ import annotations

import contextlib
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import yaml

from devstack.repo import as_yaml
from devstack.stack import Stack
from governance.kafka.admin import admin_client, create_acls, delete_acls, delete_scram_users, upsert_scram_user
from governance.model.acl import AclBinding
from governance.secrets.store import DirSecretStore
from governance.secrets.values import SecretValue, random_password


def closed_port() -> int:
    """A loopback port that was free a moment ago: a connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def limited_admin(stack: Stack, alias: str, user: str, denied: str, repo_from: Path, secrets_from: Path,
                  scratch: Path) -> Iterator[tuple[Path, Path]]:
    """Copies of a repo and its secret store in which cluster `alias`'s admin is `user`: ALL on the cluster,
    topics and groups but `denied` on the cluster (an ACL that DENYs it). The user and its ACLs are removed
    afterwards: the stack's brokers are shared with the worker's other modules."""
    acls = [AclBinding(f"User:{user}", "CLUSTER", "kafka-cluster", "LITERAL", "ALL"),
            AclBinding(f"User:{user}", "TOPIC", "*", "LITERAL", "ALL"),
            AclBinding(f"User:{user}", "GROUP", "*", "LITERAL", "ALL"),
            AclBinding(f"User:{user}", "CLUSTER", "kafka-cluster", "LITERAL", denied, "DENY")]
    password = random_password()
    admin = admin_client(stack.kafka[alias].admin_config())
    upsert_scram_user(admin, user, password)
    create_acls(admin, acls)
    try:
        repo, secrets = scratch / "limited-repo", scratch / "limited-secrets"
        shutil.copytree(repo_from, repo)
        shutil.copytree(secrets_from, secrets)
        clusters = yaml.safe_load((repo / "clusters.yaml").read_text())
        security = clusters["clusters"][alias]["security"]
        assert security["admin_credentials_secret"] == f"{alias}-admin"
        security["admin_credentials_secret"] = f"{alias}-limited"
        (repo / "clusters.yaml").write_text(as_yaml(clusters))
        store = DirSecretStore(secrets)
        store.put(f"{alias}-limited", "username", SecretValue(user))
        store.put(f"{alias}-limited", "password", password)
        yield repo, secrets
    finally:
        delete_acls(admin, acls)
        delete_scram_users(admin, [user])
