"""`mm2gov plan --base GIT_REF`: exactly the effective permissions a commit adds and removes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from governance.config.loader import load_inventory
from governance.policy.decide import PolicySession
from tests.conftest import REPO_ROOT, run_cli

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

ACME = REPO_ROOT / "examples" / "acme"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin"})


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """A git repo whose governance/ dir is acme at HEAD~1 and acme with two changes at HEAD."""
    repo = tmp_path / "gitops"
    shutil.copytree(ACME, repo / "governance")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "acme")
    marketing = repo / "governance" / "tenants" / "marketing.yaml"
    marketing.write_text(marketing.read_text().replace(
        '  - {name: "User:marketing-app", access: [read, write]}',
        '  - {name: "User:marketing-app", access: [read, write]}\n  - {name: "User:marketing-bi", access: [read]}'))
    payments = repo / "governance" / "tenants" / "payments.yaml"
    payments.write_text(payments.read_text().replace('  - {name: "User:payments-analytics", access: [read]}\n', ""))
    git(repo, "commit", "-q", "-am", "marketing-bi in, payments-analytics out")
    return repo / "governance"


def triples(changes: list[dict]) -> set[tuple[str, str, str, str, str, str]]:
    return {(c["principal"], c["cluster"], c["resource_type"], c["pattern_type"], c["resource_name"], c["operation"])
            for c in changes}


def expand(principal, cluster, kind, name, *ops):
    return {(principal, cluster, kind, "PREFIXED", name, op) for op in ops}


def test_plan_between_git_refs_reports_exactly_the_permission_changes(history):
    done = run_cli("plan", str(history), "--base", "HEAD~1", "--format", "json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    bi, analytics = "User:marketing-bi", "User:payments-analytics"
    assert triples(plan["permissions"]["gained"]) == (
        expand(bi, "onprem", "TOPIC", "marketing.", "READ", "DESCRIBE")
        | expand(bi, "onprem", "GROUP", "marketing-", "READ")
        | expand(bi, "cloud", "TOPIC", "onprem.marketing.", "READ", "DESCRIBE")
        | expand(bi, "cloud", "GROUP", "marketing-", "READ")
        # payments' grant to marketing reaches every marketing reader, on the source and both targets
        | expand(bi, "onprem", "TOPIC", "payments.public.", "READ", "DESCRIBE")
        | expand(bi, "cloud", "TOPIC", "onprem.payments.public.", "READ", "DESCRIBE")
        | expand(bi, "onprem-dr", "TOPIC", "onprem.payments.public.", "READ", "DESCRIBE")
    )
    assert triples(plan["permissions"]["lost"]) == (
        expand(analytics, "onprem", "TOPIC", "payments.", "READ", "DESCRIBE")
        | expand(analytics, "onprem", "GROUP", "payments-", "READ")
        | expand(analytics, "cloud", "TOPIC", "onprem.payments.", "READ", "DESCRIBE")
        | expand(analytics, "cloud", "GROUP", "payments-", "READ")
        | expand(analytics, "onprem-dr", "TOPIC", "onprem.payments.", "READ", "DESCRIBE")
        | expand(analytics, "onprem-dr", "GROUP", "payments-", "READ")
    )
    assert plan["principals"] == {"added": [{"tenant": "marketing", "principal": bi}],
                                  "removed": [{"tenant": "payments", "principal": analytics}]}
    assert plan["tenants"]["changed"] == ["marketing", "payments"]
    assert plan["violations"] == []


def test_plan_text_and_markdown_read_as_a_review(history):
    text = run_cli("plan", str(history), "--base", "HEAD~1").stdout
    assert "+ User:marketing-bi gains DESCRIBE, READ on cloud topic prefix onprem.payments.public." in text
    assert "- User:payments-analytics loses DESCRIBE, READ on onprem topic prefix payments." in text
    markdown = run_cli("plan", str(history), "--base", "HEAD~1", "--format", "markdown").stdout
    assert markdown.startswith("### mm2gov plan")
    assert "| ➕ gains | `User:marketing-bi` | DESCRIBE, READ | cloud | topic prefix `onprem.payments.public.` |" \
        in markdown


def test_plan_against_a_ref_where_the_repo_did_not_exist_adds_everything(history):
    done = run_cli("plan", str(history), "--base", "HEAD~1", "--format", "json")
    first = run_cli("plan", str(history), "--base", _empty_commit(history.parent), "--format", "json")
    assert done.returncode == 0 and first.returncode == 0, first.stderr
    plan = json.loads(first.stdout)
    assert plan["permissions"]["lost"] == []
    assert sorted(plan["tenants"]["added"]) == ["hr", "logistics", "marketing", "payments", "risk"]
    assert "did not exist there" in plan["base"]


def _empty_commit(repo: Path) -> str:
    git(repo, "checkout", "-q", "--orphan", "empty")
    git(repo, "rm", "-rq", "--cached", ".")
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    git(repo, "checkout", "-q", "-f", "main")
    return sha


def test_unknown_ref_is_exit_2(history):
    done = run_cli("plan", str(history), "--base", "no-such-ref")
    assert done.returncode == 2
    assert "--base no-such-ref: not a commit in" in done.stderr and "Traceback" not in done.stderr


def test_plan_exits_1_when_head_has_violations(tmp_path):
    done = run_cli("plan", str(REPO_ROOT / "examples/bad/grant_write"), "--base", str(ACME))
    assert done.returncode == 1
    assert "Violations in head: 1 violation (1 high) (1 new)" in done.stdout


@pytest.fixture
def rules_apart(tmp_path: Path) -> tuple[Path, Path, Path]:
    """acme with an owner outside acme.example (its organisation rule acme_owner_domain objects), a copy, and a
    copy without acme's organisation rules."""
    head = tmp_path / "head"
    shutil.copytree(ACME, head)
    hr = head / "tenants" / "hr.yaml"
    hr.write_text(hr.read_text().replace("hr-systems@acme.example", "hr@gmail.example"))
    same_rules, no_rules = tmp_path / "same", tmp_path / "no_rules"
    shutil.copytree(head, same_rules)
    shutil.copytree(head, no_rules)
    shutil.rmtree(no_rules / "policies")
    return head, same_rules, no_rules


def test_base_and_head_are_each_decided_under_their_own_organisation_rules(rules_apart):
    """Base and head with the same organisation rules are evaluated at the same time, with different rules one
    after the other (PolicySession): each side's violations come from its own rules, in either direction."""
    head, same_rules, no_rules = rules_apart

    def violations(repo: Path, base: Path) -> tuple[set[str], set[str]]:
        done = run_cli("plan", str(repo), "--base", str(base), "--format", "json")
        assert done.returncode == 0, done.stderr  # acme_owner_domain is medium, under --fail-on high
        plan = json.loads(done.stdout)
        return ({v["rule"] for v in plan["violations"]}, {v["rule"] for v in plan["new_violations"]})

    assert violations(head, no_rules) == ({"acme_owner_domain"}, {"acme_owner_domain"})  # head's rule is new
    assert violations(no_rules, head) == (set(), set())  # the base's rule does not judge head
    assert violations(head, same_rules) == ({"acme_owner_domain"}, set())  # both sides, at the same time


def test_repos_submitted_together_are_decided_under_their_own_rules(rules_apart, warm_opa):
    """Four repos submitted at once, their rules alternating: the session's two workers start them together as
    soon as OPA is ready, so an evaluation under other rules is running whenever one with its own is next."""
    head, same_rules, no_rules = rules_apart
    repos = [head, no_rules, same_rules, no_rules]
    inventories = [load_inventory(repo) for repo in repos]
    with PolicySession(warm_opa) as session:
        decisions = [session.submit(inventory) for inventory in inventories]
        found = [{v.rule for v in decision.result().violations} for decision in decisions]
    assert found == [{"acme_owner_domain"}, set(), {"acme_owner_domain"}, set()]
