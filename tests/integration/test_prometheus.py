"""The generated monitoring meets the real Prometheus tools: promtool, amtool, Prometheus and Alertmanager.

- promtool checks the rules `mm2gov generate` writes for examples/acme and runs the per-tenant unit tests
  generated beside them; the same tests fail once the rules stop selecting their tenant or flow;
- amtool checks the generated Alertmanager configuration and routes each tenant's label to its receiver;
- on the real stack, two tenants' flows run as generated, each MM2 with its tenant's generated JMX exporter
  config. A real Prometheus scrapes both and evaluates the generated rules (only `for` shortened, as paced()
  shortens MM2's intervals); a real Alertmanager routes with the generated routes, each tenant's Slack
  webhook URL read from its own file and pointing at a local HTTP receiver that records the posts. Each
  flow's series carry exactly its tenant and flow id; stopping one tenant's MM2 delivers its MM2FlowDown to
  its receiver and to no other tenant's; starting it again delivers the resolution.
- the dashboards: promtool's PromQL parser finds every acme dashboard query selecting exactly its tenant and
  its flows, also for a tenant name made of quotes and PromQL; on the stack, with each tenant's
  `mm2gov probe --serve` scraped too, every panel query of each tenant's generated dashboard returns series,
  all the tenant's own, and none with the other tenant's flow forced into the flow variable.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from devstack import tools
from devstack.process import free_port
from devstack.prometheus import Alertmanager, Prometheus, ScrapeTarget
from devstack.repo import write_stack_repo
from governance.compile.monitoring import (
    ALERT_SECRETS_PATH,
    FLOW_VARIABLE,
    LATENCY_METRIC,
    RATE_INTERVAL,
    WORKER_METRIC,
    alertmanager_routes,
    grafana_dashboard,
    regex_literal,
)
from governance.compile.monitoring.rule_tests import MAX_OTHERS, SAMPLE
from governance.kafka.admin import admin_client, create_topics
from governance.kafka.records import Record, produce
from governance.model.names import PLATFORM_ALERT_RECEIVER, alert_receiver, flow_id, probe_topic
from tests.conftest import REPO_ROOT, run_cli
from tests.integration.test_replication_policy import paced
from tests.tools.wait import wait_for

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

PACED_FOR = "10s"  # every rule's `for` in the stack test; promtool's unit tests run the generated durations
ALERTS = ("MM2FlowDown", "MM2ReplicationLatencyHigh", "MM2RecordAgeHigh")
# Generous on purpose (as in test_probe.py): the dashboards need the probe's figures, not a verdict on this machine
PROBE_SLO = {"latency_p99_ms": 300_000}
GRAFANA_RATE_INTERVAL = "1m"  # what Grafana puts for $__rate_interval: four scrape intervals at least


def run(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def acme(tmp_path_factory) -> Path:
    """`mm2gov generate examples/acme`: its monitoring/ folder."""
    out = tmp_path_factory.mktemp("acme") / "out"
    done = run_cli("generate", str(REPO_ROOT / "examples" / "acme"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out / "monitoring"


@pytest.fixture(scope="module")
def acme_slo(tmp_path_factory) -> Path:
    """examples/acme with an `slo` on every flow, generated: its monitoring/ folder (probe alerts and tests too)."""
    root = tmp_path_factory.mktemp("acme-slo")
    repo, out = root / "repo", root / "out"
    shutil.copytree(REPO_ROOT / "examples" / "acme", repo)
    for path in sorted((repo / "tenants").glob("*.yaml")):
        tenant = yaml.safe_load(path.read_text())
        for flow in tenant.get("flows") or []:
            flow["slo"] = {"latency_p99_ms": 10_000}
        path.write_text(yaml.safe_dump(tenant, sort_keys=False))
    done = run_cli("generate", str(repo), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out / "monitoring"


def rule_files(prometheus: Path) -> list[Path]:
    """The generated rules files (one per tenant with flows: prometheus/rules/<tenant>.yaml), sorted."""
    return sorted((prometheus / "rules").glob("*.yaml"))


def rule_groups(prometheus: Path) -> list[dict[str, Any]]:
    """Every group of the generated rules files, in file order."""
    return [g for path in rule_files(prometheus) for g in yaml.safe_load(path.read_text())["groups"]]


def without(prometheus: Path, pattern: str, into: Path, replacement: str = "") -> Path:
    """A copy of the prometheus folder whose rule expressions lost what `pattern` matches (the tests beside them),
    or had it replaced by `replacement`."""
    copy = into / "prometheus"
    (copy / "rules").mkdir(parents=True)
    for path in rule_files(prometheus):
        data = yaml.safe_load(path.read_text())
        for group in data["groups"]:
            for rule in group["rules"]:
                rule["expr"] = re.sub(pattern, replacement, rule["expr"])
        (copy / "rules" / path.name).write_text(yaml.safe_dump(data, sort_keys=False))
    (copy / "tests").mkdir()
    for test in (prometheus / "tests").glob("*.yaml"):
        (copy / "tests" / test.name).write_text(test.read_text())
    return copy


@pytest.mark.parametrize("generated", ["acme", "acme_slo"])
def test_promtool_accepts_the_generated_rules(generated, request):
    acme = request.getfixturevalue(generated)
    files = rule_files(acme / "prometheus")
    done = run(tools.promtool(), "check", "rules", *files)
    assert done.returncode == 0, done.stdout + done.stderr
    for path in files:  # promtool reports each file: "Checking <file>", then "SUCCESS: <n> rules found"
        count = sum(len(g["rules"]) for g in yaml.safe_load(path.read_text())["groups"])
        assert f"Checking {path}\n  SUCCESS: {count} rules found" in done.stdout


@pytest.mark.parametrize("generated", ["acme", "acme_slo"])
def test_generated_rule_tests_pass_and_catch_rules_that_stop_filtering(generated, request, tmp_path):
    """acme_slo: the probe alerts (every flow has an `slo`) are in the rules and in their tests."""
    acme = request.getfixturevalue(generated)
    rules = acme / "prometheus"
    probe_alerts = {r["alert"] for g in rule_groups(rules) for r in g["rules"] if r["alert"].startswith("MM2Probe")}
    assert bool(probe_alerts) == (generated == "acme_slo")
    groups = [g["name"] for g in rule_groups(rules)]
    tests = sorted((acme / "prometheus" / "tests").glob("*.yaml"))
    assert [f"mm2gov-{t.stem}" for t in tests] == groups  # one test file per tenant with flows
    done = run(tools.promtool(), "test", "rules", *tests)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("SUCCESS") == len(tests)
    # the same tests against rules that no longer select their tenant, or their flow: every tenant's test fails
    for name, pattern in (("no-tenant", r'tenant="[^"]*", '), ("no-flow", r', flow="[^"]*"')):
        broken = without(rules, pattern, tmp_path / name)
        done = run(tools.promtool(), "test", "rules", *sorted((broken / "tests").glob("*.yaml")))
        assert done.returncode != 0
        assert (done.stdout + done.stderr).count("FAILED") == len(tests), done.stdout + done.stderr


LOOKALIKES = ["t1", "t10", "t100", "t1000", "t11", "pay", "pay-eu", "pay-eu-x"]


@pytest.fixture(scope="module")
def estate(tmp_path_factory) -> Path:
    """`mm2gov generate` on 20 tenants t0000... and tenants whose names start with each other's (LOOKALIKES),
    two flows each: more tenants than one tenant's rule tests load (rule_tests.MAX_OTHERS)."""
    root = tmp_path_factory.mktemp("estate")
    repo, out = root / "repo", root / "out"
    (repo / "tenants").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "examples" / "acme" / "clusters.yaml", repo / "clusters.yaml")
    for name in [f"t{i:04d}" for i in range(20)] + LOOKALIKES:
        flows = [{"source": "onprem", "target": target, "topics": [f"{name}\\..*"], "groups": [f"{name}_.*"]}
                 for target in ("onprem-dr", "cloud")]
        (repo / "tenants" / f"{name}.yaml").write_text(yaml.safe_dump(
            {"name": name, "owners": [f"{name}@example.com"], "classification": "internal",
             "topic_prefixes": [f"{name}."], "group_prefixes": [f"{name}_"],
             "principals": [{"name": f"User:{name}-app", "access": ["read", "write"]}], "flows": flows}))
    done = run_cli("generate", str(repo), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out / "monitoring"


def failed(prometheus: Path) -> set[str]:
    """The tenants whose generated rule tests fail under promtool, against the rules beside them (promtool
    names each file on stdout and its failures on stderr: one pipe for both keeps them in order)."""
    done = subprocess.run([str(tools.promtool()), "test", "rules", *sorted((prometheus / "tests").glob("*.yaml"))],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    found = set(re.findall(r"Processing test file: \S*/([^/\s]+)\.yaml\n\s+FAILED", done.stdout))
    assert (done.returncode == 0) == (not found), done.stdout
    return found


def test_rule_tests_of_a_larger_estate_load_a_bounded_set_and_still_catch_rules_that_stop_filtering(estate,
                                                                                                   tmp_path):
    """Each tenant's tests load a few other tenants (its look-alikes and a sample), not all 28; they pass,
    they all fail once the rules stop selecting their tenant or their flow, and the tests of every tenant that
    has a look-alike starting with its name fail once the tenant matchers become prefix regexes."""
    prometheus = estate / "prometheus"
    tenants = sorted(p.stem for p in (prometheus / "tests").glob("*.yaml"))
    assert len(tenants) == 28
    for tenant in tenants:
        loaded = yaml.safe_load((prometheus / "tests" / f"{tenant}.yaml").read_text())["rule_files"]
        assert 1 + SAMPLE <= len(loaded) - 1 <= MAX_OTHERS and f"../rules/{tenant}.yaml" in loaded
    assert failed(prometheus) == set()
    for name, pattern in (("no-tenant", r'tenant="[^"]*", '), ("no-flow", r', flow="[^"]*"')):
        assert failed(without(prometheus, pattern, tmp_path / name)) == set(tenants), name
    prefix = without(prometheus, r'tenant="([^"]*)"', tmp_path / "prefix", r'tenant=~"\1.*"')
    assert failed(prefix) >= {t for t in tenants if any(o != t and o.startswith(t) for o in tenants)}


def test_amtool_accepts_the_generated_routes_and_routes_each_tenant_to_its_receiver(acme, tmp_path):
    routes = acme / "alertmanager" / "routes.yaml"
    done = run(tools.amtool(), "check-config", routes)
    assert done.returncode == 0, done.stdout + done.stderr
    tenants = sorted(p.stem for p in (acme / "grafana").glob("*.json"))  # every tenant, with flows or not
    for tenant in [*tenants, "someone-else"]:
        done = run(tools.amtool(), "config", "routes", "test", f"--config.file={routes}",
                   f"tenant={tenant}", "alertname=MM2FlowDown")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == (alert_receiver(tenant) if tenant in tenants else PLATFORM_ALERT_RECEIVER)
    # a tenant named like the platform's receiver gets its own receiver; the configuration stays valid
    hostile = tmp_path / "routes.yaml"
    hostile.write_text(yaml.safe_dump(alertmanager_routes(["platform", "payments"])))
    done = run(tools.amtool(), "check-config", hostile)
    assert done.returncode == 0, done.stdout + done.stderr
    done = run(tools.amtool(), "config", "routes", "test", f"--config.file={hostile}", "alertname=Other")
    assert done.stdout.strip() == PLATFORM_ALERT_RECEIVER != alert_receiver("platform")


# -- dashboards --------------------------------------------------------------------------------------------------


def panel_queries(dashboard: dict[str, Any], flow: str) -> list[tuple[str, str]]:
    """(panel title, query) of every panel target, variables substituted as Grafana does: `$flow` by the
    variable's allValue when `flow` is "All", else by the regex-escaped value (what a viewer's pick, or a
    forged URL, puts there); `$__rate_interval` by an interval."""
    [variable] = [v for v in dashboard["templating"]["list"] if v["name"] == FLOW_VARIABLE]
    value = variable["allValue"] if flow == "All" else regex_literal(flow)
    return [(panel["title"], target["expr"].replace(f"${FLOW_VARIABLE}", value)
             .replace(RATE_INTERVAL, GRAFANA_RATE_INTERVAL))
            for panel in dashboard["panels"] if panel["type"] != "row" for target in panel["targets"]]


@functools.cache  # a query's parse without a matcher serves each label checked on it: one promtool run fewer
def promql(*argv: str) -> str:
    """promtool's PromQL parser (`promtool promql`): the query as it parses, printed back."""
    done = run(tools.promtool(), "--experimental", "promql", *argv)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


def every_selector_has(expr: str, label: str, value: str, kind: str = "=") -> bool:
    """Whether every vector selector of `expr`, as Prometheus parses it, holds `label` `kind` `value`.

    `label-matchers set` puts the matcher on every selector (sorting each selector's matchers); the query is
    unchanged by that, once sorted the same way, exactly when each selector held that matcher already.
    """
    as_parsed = promql("label-matchers", "delete", promql("label-matchers", "set", expr, "mm2gov_sort", "x"),
                       "mm2gov_sort")
    return promql("label-matchers", "set", f"--type={kind}", expr, label, value) == as_parsed


def test_every_dashboard_query_parses_and_selects_only_its_tenant_and_flows(acme):
    dashboards = sorted((acme / "grafana").glob("*.json"))
    assert len(dashboards) >= 2
    for path in dashboards:
        tenant, dashboard = path.stem, json.loads(path.read_text())
        [flows] = [v["allValue"] for v in dashboard["templating"]["list"] if v["name"] == FLOW_VARIABLE]
        queries = panel_queries(dashboard, "All")
        assert len(queries) >= 10
        for title, expr in queries:
            assert every_selector_has(expr, "tenant", tenant), (tenant, title, expr)
            assert every_selector_has(expr, "flow", flows, "=~"), (tenant, title, expr)
    # and the check catches a query that forgets its tenant in one selector
    assert not every_selector_has('a{tenant="t"} / b{flow="f"}', "tenant", "t")


def test_a_hostile_tenant_name_stays_the_value_of_its_matcher():
    """The parser reads the whole name as the tenant matcher's value: no quote or backslash ends it early."""
    for hostile in ('x"} or vector(1) or y{tenant=~".*', "back\\\\", 'x\\"} or up{a="', "line\nbreak\u0001"):
        for title, expr in panel_queries(grafana_dashboard(hostile, ["f"]), "All"):
            assert every_selector_has(expr, "tenant", hostile), (title, expr)


# -- the real stack ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Post:
    tenant: str  # the receiver's path: whose webhook URL was called
    title: str
    text: str


class SlackReceiver:
    """A local Slack-compatible webhook: records every post by the path (one per tenant) it came to."""

    def __init__(self) -> None:
        self.posts: list[Post] = []
        lock = threading.Lock()
        posts = self.posts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    for attachment in body.get("attachments", []):
                        posts.append(Post(self.path.strip("/"), attachment.get("title", ""),
                                          attachment.get("text", "")))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, tenant: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{tenant}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def routes_with_webhook_files(routes: dict[str, Any], tenants: list[str], receiver: SlackReceiver,
                              root: Path) -> dict[str, Any]:
    """The generated routes with the secrets mount moved to `root`, where each tenant's file holds its URL."""
    tenant_of = {alert_receiver(t): t for t in tenants}
    for entry in routes["receivers"]:
        for slack in entry.get("slack_configs", []):
            path = root / Path(slack["api_url_file"]).relative_to(ALERT_SECRETS_PATH)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(receiver.url(tenant_of[entry["name"]]))
            path.chmod(0o600)
            slack["api_url_file"] = str(path)
    return routes


def paced_rules(prometheus: Path, into: Path) -> list[Path]:
    """The MM2 rules files with every `for` shortened. The probe rules are left out here: these tests page on
    MM2's own series, and MM2ProbeAbsent would rightly page both tenants until `probe --serve` runs (the probe
    rules are checked by promtool's tests above, forged series included)."""
    into.mkdir(parents=True, exist_ok=True)
    paced = []
    for path in rule_files(prometheus):
        data = yaml.safe_load(path.read_text())
        for group in data["groups"]:
            group["rules"] = [rule for rule in group["rules"] if not rule["alert"].startswith("MM2Probe")]
            for rule in group["rules"]:
                rule["for"] = PACED_FOR
        (into / path.name).write_text(yaml.safe_dump(data, sort_keys=False))
        paced.append(into / path.name)
    return paced


def assigned_tasks(metrics_url: str) -> float:
    """The tasks an MM2's Connect worker has now (WORKER_METRIC), as its own /metrics says (no Prometheus)."""
    with urllib.request.urlopen(metrics_url, timeout=10) as answer:
        text = answer.read().decode()
    return sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
               if sample.name == WORKER_METRIC)


def mirrors_topic(metrics_url: str, topic: str) -> bool:
    """Whether an MM2's source task mirrors `topic` now: its per-partition series (LATENCY_METRIC, a value or
    NaN before the first record) are on the MM2's own /metrics. The target topic has the source's name in it."""
    with urllib.request.urlopen(metrics_url, timeout=10) as answer:
        text = answer.read().decode()
    return any(sample.name == LATENCY_METRIC and sample.labels.get("topic", "").endswith(topic)
               for family in text_string_to_metric_families(text) for sample in family.samples)


def our_alerts(prometheus: Prometheus, tenants: list[str]) -> list[Any]:
    return [a for a in prometheus.alerts() if a.labels.get("tenant") in tenants]


@pytest.fixture(scope="module")
def monitored(stack, tmp_path_factory) -> Iterator[dict[str, Any]]:
    run_id = uuid.uuid4().hex[:5]
    tenants = [f"pm-a{run_id}", f"pmb{run_id}"]  # a `-` in one: its flow id escapes it (names.flow_id)
    root = tmp_path_factory.mktemp("prometheus")
    repo, secrets, out = root / "repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, tenants)
    for tenant in tenants:  # an slo: each flow replicates its tenant's probe topic, which `probe --serve` measures
        tenant_file = repo / "tenants" / f"{tenant}.yaml"
        declared = yaml.safe_load(tenant_file.read_text())
        declared["flows"][0]["slo"] = PROBE_SLO
        tenant_file.write_text(yaml.safe_dump(declared))
    stack.export_secret_store(secrets)
    source = stack.kafka["source"]
    create_topics(admin_client(source.admin_config()), [f"{t}.orders" for t in tenants])
    applied = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    generated = run_cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr
    monitoring = out / "monitoring"
    flows = {t: flow_id(t, "source", "target") for t in tenants}
    properties = {}
    for tenant, flow in flows.items():
        properties[tenant] = root / f"{flow}.properties"
        properties[tenant].write_text(paced((out / "mm2" / f"{flow}.properties").read_text()))

    receiver = SlackReceiver()
    started: list[Any] = []
    try:
        routes = yaml.safe_load((monitoring / "alertmanager" / "routes.yaml").read_text())
        routes = routes_with_webhook_files(routes, tenants, receiver, root / "am-secrets")
        alertmanager = Alertmanager(root, routes).start()
        started.append(alertmanager)
        for tenant, flow in flows.items():
            stack.start_mirrormaker(flow, properties[tenant], metrics_config=monitoring / "jmx" / f"{tenant}.yaml")
            started.append(flow)
        targets = [ScrapeTarget(f"mm2-{flow}", stack.mirrormakers[flow].metrics_url) for flow in flows.values()]
        # Prometheus evaluates MM2FlowDown from its first scrape: a worker still joining its group has no task
        # yet (seconds on a loaded machine, longer than the shortened `for`) and would page before the tests
        # begin. So each flow's worker has its tasks, as its own /metrics says, before Prometheus starts.
        for target in targets:
            wait_for(f"tasks on {target.job}'s worker", lambda url=target.url: assigned_tasks(url) > 0, 120)
        # A record for each flow to replicate, written once its source task mirrors the topic: the record's
        # replication latency is then the flow's, not how long the MM2 took to start (over the 60 s threshold
        # on a loaded machine, which paged the healthy tenant: CI, 2026-11-28).
        for tenant, flow in flows.items():
            wait_for(f"{flow}'s source task on {tenant}.orders", lambda url=stack.mirrormakers[flow].metrics_url,
                     topic=f"{tenant}.orders": mirrors_topic(url, topic), 120)
            produce(source.admin_config(), f"{tenant}.orders", [Record(b"k", f"{tenant}-v".encode(), [])])
        rules = paced_rules(monitoring / "prometheus", root / "rules")
        prometheus = Prometheus(root, targets, rules, alertmanager.url).start()
        started.append(prometheus)
        for tenant, flow in flows.items():  # both flows replicating, no alert of theirs pending or firing
            wait_for(f"{flow}'s replication latency in Prometheus",
                     lambda tenant=tenant, flow=flow: prometheus.query(
                         f'{LATENCY_METRIC}{{tenant="{tenant}", flow="{flow}"}}'), 180)
        wait_for("no pending or firing alert of the two tenants", lambda: not our_alerts(prometheus, tenants), 60)
        yield {"tenants": tenants, "flows": flows, "properties": properties, "monitoring": monitoring,
               "prometheus": prometheus, "alertmanager": alertmanager, "receiver": receiver, "rules": rules,
               "root": root, "repo": repo, "secrets": secrets}
    finally:
        for item in reversed(started):
            if isinstance(item, str):
                if item in stack.mirrormakers:
                    stack.stop_mirrormaker(item)
            else:
                item.stop()
        receiver.stop()


SETTLED = 5.0  # seconds before now: every scrape that began earlier has ended (its timeout is 2 s) and is stored


def present_at(prometheus: Prometheus, expr: str, what: str) -> float:
    """A moment, SETTLED seconds back, at which `expr` selects series; the queries that must be judged where
    those series are there are evaluated at it. On a loaded machine a scrape of a JMX exporter can outlast its
    timeout (devstack.prometheus.SCRAPE_INTERVAL), and the failed scrape marks every series of its target stale:
    an instant query at that moment selects nothing, so a positive one would fail and a negative one would prove
    nothing (a fresh-clone run found a flow's series missing so). A moment far enough back no longer changes:
    its scrapes are all stored."""
    def found() -> float | None:
        at = time.time() - SETTLED
        return at if prometheus.query(expr, at=at) else None
    return wait_for(what, found, 60)


def test_each_flows_series_carry_exactly_its_tenant_and_flow(monitored):
    prometheus = monitored["prometheus"]
    for tenant, flow in monitored["flows"].items():
        job = f"mm2-{flow}"
        # The series of the job's current target, once its worker holds tasks: after test_stopping_a_flows_mm2_
        # pages_its_tenant_only_and_restarting_resolves the job's MM2 is a new process on another port, which may
        # still be joining its group (a run in random order, seed 864836, found two `up` series of the job; the
        # restarted worker was then seen with no task yet). The label checks below cover every instance of the job.
        [current] = [target for target in prometheus.targets if target.job == job]
        instance = urllib.parse.urlsplit(current.url).netloc
        at = present_at(prometheus, f'{WORKER_METRIC}{{job="{job}", instance="{instance}"}} > 0',
                        f"a scrape of {job} with tasks on its worker")
        [up] = prometheus.query(f'up{{job="{job}", instance="{instance}"}}', at=at)
        assert up.value == 1
        labelled = prometheus.query(f'{{job="{job}", tenant!=""}}', at=at)
        assert labelled and {(s.labels["tenant"], s.labels["flow"]) for s in labelled} == {(tenant, flow)}
        assert not prometheus.query(f'{{job="{job}", flow!="", tenant=""}}', at=at)
        [worker] = prometheus.query(f'{WORKER_METRIC}{{job="{job}", instance="{instance}"}}', at=at)
        assert worker.value > 0  # the flow's Connect worker holds tasks
        latency = prometheus.query(f'{LATENCY_METRIC}{{job="{job}"}}', at=at)
        # the tenant's orders, and its probe topic once `probing` (another test here, any order) created it
        probe = f"source.{probe_topic([f'{tenant}.'])}"
        assert f"source.{tenant}.orders" in {s.labels["topic"] for s in latency}
        assert {s.labels["topic"] for s in latency} <= {f"source.{tenant}.orders", probe}


def test_the_generated_rules_evaluate_healthy(monitored):
    prometheus, tenants = monitored["prometheus"], monitored["tenants"]
    expected = {(f"mm2gov-{t}", a) for t in tenants for a in ALERTS}

    def healthy() -> bool:
        rules = prometheus.rules()
        return {(r.group, r.name) for r in rules} == expected and all(r.health == "ok" for r in rules)

    wait_for("every generated rule evaluated without error", healthy, 30)
    assert not our_alerts(prometheus, tenants)


@pytest.fixture(scope="module")
def probing(monitored) -> Iterator[dict[str, ScrapeTarget]]:
    """`mm2gov probe --serve` per tenant (as the k8s Deployment runs it), scraped by the same Prometheus."""
    prometheus, root = monitored["prometheus"], monitored["root"]
    servers: list[subprocess.Popen[bytes]] = []
    targets: dict[str, ScrapeTarget] = {}
    try:
        for tenant in monitored["tenants"]:
            port = free_port()
            with open(root / f"probe-{tenant}.log", "wb") as log:
                servers.append(subprocess.Popen(
                    [sys.executable, "-m", "governance", "probe", tenant, "--repo", str(monitored["repo"]),
                     "--secrets-dir", str(monitored["secrets"]), "--per-partition", "2", "--wait", "20", "--serve",
                     "--port", str(port), "--interval", "20"], stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT))
            targets[tenant] = ScrapeTarget(f"probe-{tenant}", f"http://127.0.0.1:{port}/metrics")
        prometheus.reload([*prometheus.targets, *targets.values()])
        yield targets
    finally:
        for server in servers:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(10)
        if targets and prometheus.process and prometheus.process.pid:
            prometheus.reload([t for t in prometheus.targets if t not in targets.values()])


def test_every_dashboard_panel_shows_its_tenants_flows_and_no_one_elses(monitored, probing):
    """Each tenant's generated dashboard, every panel query run on the real Prometheus as Grafana would run it
    (all flows, then each flow picked): each returns series, all of the tenant's own flow. With the other
    tenant's flow forced into the flow variable (a forged URL), none returns anything."""
    prometheus, flows = monitored["prometheus"], monitored["flows"]
    for tenant, flow in flows.items():
        dashboard = json.loads((monitored["monitoring"] / "grafana" / f"{tenant}.json").read_text())
        for picked in ("All", flow):
            queries = panel_queries(dashboard, picked)

            def answered(queries: list[tuple[str, str]] = queries) -> list[tuple[str, list[Any]]] | None:
                answers = [(title, prometheus.query(expr)) for title, expr in queries]
                return answers if all(series for _, series in answers) else None

            answers = wait_for(f"series in every panel of {tenant}'s dashboard ({picked})", answered, 300)
            for title, series in answers:
                assert {(s.labels.get("tenant"), s.labels.get("flow")) for s in series} == {(tenant, flow)}, title
        [other] = [f for t, f in flows.items() if t != tenant]
        # judged at a moment when the other tenant's series are there: its forged panels still select nothing
        at = present_at(prometheus, f'{WORKER_METRIC}{{flow="{other}"}}', f"{other}'s series in Prometheus")
        for title, expr in panel_queries(dashboard, other):
            assert not prometheus.query(expr, at=at), (title, expr)


def test_stopping_a_flows_mm2_pages_its_tenant_only_and_restarting_resolves(stack, monitored):
    prometheus, alertmanager, receiver = monitored["prometheus"], monitored["alertmanager"], monitored["receiver"]
    down, other = monitored["tenants"]
    flow = monitored["flows"][down]
    firing, resolved = f"[{down}] FIRING: MM2FlowDown", f"[{down}] RESOLVED: MM2FlowDown"
    assert not receiver.posts  # both flows healthy since Prometheus started: nobody was paged

    stack.stop_mirrormaker(flow)
    [post] = wait_for(f"{firing} posted", lambda: [p for p in receiver.posts if p.title == firing], 120)
    assert post.tenant == down and flow in post.text
    [routed] = [a for a in alertmanager.alerts() if a.labels["alertname"] == "MM2FlowDown"]
    assert (routed.labels["tenant"], routed.labels["flow"], routed.receivers) == (down, flow, (alert_receiver(down),))

    mm2 = stack.start_mirrormaker(flow, monitored["properties"][down],
                                  metrics_config=monitored["monitoring"] / "jmx" / f"{down}.yaml")
    targets = [t for t in prometheus.targets if t.job != f"mm2-{flow}"] + [ScrapeTarget(f"mm2-{flow}", mm2.metrics_url)]
    prometheus.reload(targets)  # the restarted MM2's exporter listens on a new port
    wait_for(f"{resolved} posted", lambda: [p for p in receiver.posts if p.title == resolved], 180)
    assert {p.tenant for p in receiver.posts} == {down}, receiver.posts  # the other tenant was never paged
    assert all(other not in p.title + p.text for p in receiver.posts)
