"""Runtime failures end in one clear line (exit 3), and no secret value ever reaches output or files.

Uses the session stack; the repo's tenants (leak-*) are this module's own.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from devstack.repo import write_stack_repo
from governance.kafka import ownership
from governance.kafka.admin import admin_client, describe_acls
from tests.conftest import run_cli, secret_values
from tests.tools.failures import closed_port


@pytest.fixture
def repo(stack, tmp_path: Path) -> tuple[Path, Path]:
    repo, secrets = tmp_path / "repo", tmp_path / "secrets"
    write_stack_repo(stack, repo, [f"leak-{uuid.uuid4().hex[:6]}"])  # shared brokers: a fresh tenant per test
    stack.export_secret_store(secrets)
    return repo, secrets


def test_unreachable_cluster_is_exit_3_and_changes_nothing(stack, repo):
    repo_dir, secrets = repo
    clusters = repo_dir / "clusters.yaml"
    source_line = next(line for line in clusters.read_text().splitlines() if "bootstrap_servers" in line)
    port = closed_port()
    clusters.write_text(clusters.read_text().replace(source_line, f'    bootstrap_servers: "127.0.0.1:{port}"', 1))
    done = run_cli("apply", str(repo_dir), "--secrets-dir", str(secrets))
    assert done.returncode == 3
    assert "Traceback" not in done.stderr
    assert f"error: cluster source (127.0.0.1:{port}) unreachable" in done.stderr
    # nothing half-applied: the reachable target was planned but not changed
    assert not [p for p in secrets.rglob("password") if p.parent.name.startswith("scram-")]
    target_acls = describe_acls(admin_client(stack.kafka["target"].admin_config()))
    [tenant] = [p.stem for p in (repo_dir / "tenants").glob("*.yaml")]  # this test's own (other tests leave theirs)
    assert not any(b.principal.startswith(f"User:{tenant}") for b in target_acls)


def test_missing_admin_secret_is_exit_3_naming_the_secret(repo):
    repo_dir, secrets = repo
    shutil.rmtree(secrets / "target-admin")
    done = run_cli("apply", str(repo_dir), "--secrets-dir", str(secrets))
    assert done.returncode == 3
    assert "error: secret 'target-admin' has no key 'username'" in done.stderr and "Traceback" not in done.stderr


def test_no_secret_value_in_any_output_or_generated_file(repo, tmp_path):
    """The canary: every secret in the store (before and after rotation), looked for in everything
    issue, apply, rotate, drift, generate and plan print at debug level and write."""
    repo_dir, secrets = repo
    out = tmp_path / "out"
    transcripts, canaries = [], set()
    for args in (["validate", str(repo_dir)],
                 ["secrets", "issue", str(repo_dir), "--to", f"dir:{secrets}"],
                 ["apply", str(repo_dir), "--secrets-dir", str(secrets)],
                 ["apply", str(repo_dir), "--secrets-dir", str(secrets), "--format", "json"],
                 ["secrets", "rotate", str(repo_dir), "--to", f"dir:{secrets}", "--format", "json"],
                 ["drift", str(repo_dir), "--secrets-dir", str(secrets)],
                 ["generate", str(repo_dir), "--out", str(out), "--secrets-path", str(secrets)],
                 ["plan", str(repo_dir), "--base", str(repo_dir), "--format", "json"]):
        canaries |= secret_values(secrets)
        done = run_cli("--log-level", "debug", *args)
        assert done.returncode == 0, done.stderr[-2000:]
        transcripts.append(done.stdout + done.stderr)
    canaries |= secret_values(secrets)
    assert '"rotated"' in transcripts[4] and "DEBUG" in transcripts[2]
    # two admin passwords, the CA key, and per principal a password and a JAAS line, before and after rotation
    assert len(canaries) >= 12, sorted(len(c) for c in canaries)
    written = [p.read_text() for p in out.rglob("*") if p.is_file()]
    written += [p.read_text() for p in repo_dir.rglob("*") if p.is_file()]
    for canary in canaries:
        assert len(canary) >= 32
        assert not any(canary in text for text in transcripts), "a secret value reached the output"
        assert not any(canary in text for text in written), "a secret value reached a generated file"


def test_a_damaged_secret_store_stops_apply_before_any_change(stack, repo):
    """apply reads and issues the passwords of new users in the store for every cluster before it changes
    any: a secret it cannot read or write (here a file where the secret's folder belongs; a read-only
    mount fails the write the same way, which root, running this suite, would not see) is exit 3 naming
    it, and no cluster was touched (before, each cluster had already recorded the new principals as owned
    and removed what it was removing when the store failed, then said 'internal error')."""
    repo_dir, secrets = repo
    [tenant] = [p.stem for p in (repo_dir / "tenants").glob("*.yaml")]
    blocked = secrets / f"scram-target-{tenant}-app"
    blocked.write_text("not a folder")
    owned_before = {alias: ownership.read_owned(stack.kafka[alias].admin_config()) for alias in stack.kafka}

    done = run_cli("apply", str(repo_dir), "--secrets-dir", str(secrets))

    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert f"error: secret store {secrets}: cannot read secret 'scram-target-{tenant}-app': Not a directory" \
        in done.stderr
    for alias, cluster in stack.kafka.items():
        assert ownership.read_owned(cluster.admin_config()) == owned_before[alias], alias
        assert not [b for b in describe_acls(admin_client(cluster.admin_config())) if tenant in b.principal], alias
