"""The audit on a real Spark standalone cluster: a master and two workers (each its own JVM) started on
loopback from pyspark's own distribution, running the audit through `mm2gov audit --spark-master
spark://...` and through `spark-submit .../spark_audit/main.py`, the two applications at once.

On the live stack, with this module's tenants applied as test_audit.py does (clu-a, clu-b: their
own names, so the module runs before or after test_audit.py alike) and leaks planted on the real
clusters (cross-tenant, wildcard, prefix-overlap, MM2-overreach and stale ACLs; another tenant's
record in a 4-partition topic), both cluster runs must: give exactly the findings of local mode
(run beside them), have the Kafka source jars fetched by both executors, run the record scan's tasks
on both executors (read from Spark's event log, not assumed), and print the audit's own progress
lines only: no progress bars, py4j or Spark INFO lines, librdkafka lines.

Local mode here is `mm2gov audit` in this process on the session's local[2] SparkSession
(tests/tools/in_process.py): the same audit on the same live data, without a fourth driver JVM starting
and warming up beside the cluster's (about 70 CPU-s of a fresh-clone run, 2026-11-28). The audit as its
own local-mode process, and its output, are test_image_install.py's (from an installed prefix).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

import spark_audit.main
from devstack import tools
from devstack.process import QUICK_JVM
from devstack.repo import as_yaml, tenant_document, write_stack_repo
from devstack.spark_cluster import (
    SparkStandalone,
    event_log_conf,
    executors_added,
    java_home,
    read_event_logs,
    spark_submit,
    stages_of_jobs,
)
from governance.kafka.admin import admin_client, create_acls, create_topics, delete_acls
from governance.model.acl import AclBinding
from governance.model.names import flow_id, mm2_principal
from spark_audit.job import SCAN_JOB
from spark_audit.run import LOG4J2_OPTION
from tests.conftest import run_cli
from tests.tools.audit_output import assert_only_the_audits_output
from tests.tools.spark_conf import QUICK_DRIVER, conf_args, submit_args

pytestmark = pytest.mark.timeout(1200)  # fixtures included: the stack, the cluster and three audits

MARKERS = {"clu-a": "lob-ca", "clu-b": "lob-cb"}
MM2_A = mm2_principal(flow_id("clu-a", "source", "target"))
LEAK_ACLS = [AclBinding("User:clu-b-app", "TOPIC", "clu-a.", "PREFIXED", "READ"),  # ACL_CROSS_TENANT
             AclBinding("User:clu-b-app", "TOPIC", "*", "LITERAL", "READ"),  # ACL_WILDCARD
             AclBinding("User:clu-a-app", "TOPIC", "clu-", "PREFIXED", "DESCRIBE"),  # ACL_PREFIX_OVERLAP
             AclBinding(MM2_A, "TOPIC", "clu-b.", "PREFIXED", "READ"),  # MM2_PRINCIPAL_OVERREACH
             AclBinding("User:clu-ghost", "TOPIC", "clu-ghost.", "PREFIXED", "READ")]  # ACL_STALE
PLANTED_CHECKS = {"ACL_CROSS_TENANT", "ACL_WILDCARD", "ACL_PREFIX_OVERLAP", "MM2_PRINCIPAL_OVERREACH",
                  "ACL_STALE", "RECORD_TENANT_MISMATCH"}
# Each tenant's own topic (its records marked as its own: no finding), one on each cluster. On the
# source, 4 partitions and one record marked as clu-b's: RECORD_TENANT_MISMATCH.
TOPICS = {"source": ("clu-a.scan", 4, "clu-a"), "target": ("clu-b.scan", 2, "clu-b")}
# Each application takes a one-core executor on each worker and waits for both before its first job,
# so that the scan's tasks are spread from the start (Spark's Kafka source prefers one executor per
# topic partition, by hash; consecutive partitions of a topic alternate between two executors).
# Executors (and, below, drivers) on the JIT's quick tier (QUICK_JVM: the data is tiny), the executors with
# the log4j2 configuration mm2gov gives them on a loopback cluster; drivers and executors with QUICK_DRIVER's
# memory pages (tests/tools/spark_conf.py says why).
CLUSTER_CONF = {"spark.cores.max": "2", "spark.executor.cores": "1",
                "spark.scheduler.minRegisteredResourcesRatio": "1.0",
                "spark.executor.extraJavaOptions": " ".join((LOG4J2_OPTION, *QUICK_JVM)),
                "spark.buffer.pageSize": QUICK_DRIVER["spark.buffer.pageSize"]}
# spark-submit runs these (the same code as every check; fewer keep the test short)
SUBMIT_CHECKS = {"RECORD_TENANT_MISMATCH", "REPLICATION_GAP", "ACL_WILDCARD", "ACL_STALE", "TOPIC_UNOWNED",
                 "GROUP_CROSS_TENANT"}


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Future[SparkStandalone]]:
    """Two workers of two cores each (a core and an executor's 1 GiB for each of the two applications that
    run at once); started in the background while the deployment is made."""
    cluster = SparkStandalone(tmp_path_factory.mktemp("spark-standalone"), workers=2, cores=2, memory="2g")
    with ThreadPoolExecutor(1) as pool:
        started = pool.submit(cluster.start)
        try:
            yield started
        finally:
            wait([started])
            cluster.stop()


@pytest.fixture(scope="module")
def deployment(stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """clu-a and clu-b applied (their ACLs and SCRAM users), their topics filled, the leaks planted;
    the leaks and the topics removed afterwards (the next `apply` of another repo removes the rest)."""
    root = tmp_path_factory.mktemp("audit-cluster-repo")
    repo, store = root / "repo", root / "store"
    write_stack_repo(stack, repo, [])
    for name, marker in MARKERS.items():
        (repo / "tenants" / f"{name}.yaml").write_text(
            as_yaml({**tenant_document(name), "record_marker": {"header": "lob", "value": marker}}))
    stack.export_secret_store(store)
    done = run_cli("apply", str(repo), "--secrets-dir", str(store))
    assert done.returncode == 0, done.stderr
    for alias, (topic, partitions, tenant) in TOPICS.items():
        config = stack.kafka[alias].admin_config()
        create_topics(admin_client(config), [topic], partitions=partitions)
        producer = Producer({**config, "acks": "all"})
        for i in range(10 * partitions):
            producer.produce(topic, key=f"k{i}".encode(), value=b"v", partition=i % partitions,
                             headers=[("lob", MARKERS[tenant].encode())])
        if alias == "source":
            producer.produce(topic, key=b"smuggled", value=b"x", partition=1, headers=[("lob", b"lob-cb")])
        assert producer.flush(30) == 0
    source = stack.kafka["source"].admin_config()
    create_acls(admin_client(source), LEAK_ACLS)
    yield {"repo": repo, "store": store}
    delete_acls(admin_client(source), LEAK_ACLS)
    for alias, (topic, _, _) in TOPICS.items():
        admin = admin_client(stack.kafka[alias].admin_config())
        for future in admin.delete_topics([topic]).values():
            future.result(timeout=60)


@pytest.fixture(scope="module")
def runs(spark_cluster: Future[SparkStandalone], deployment: dict[str, Path], audit_in_process,
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same audit in local mode (in this process, on the session's SparkSession) and with `mm2gov audit
    --spark-master`, every check; with spark-submit, SUBMIT_CHECKS (both that read records and four of the
    metadata)."""
    cluster = spark_cluster.result()
    root = tmp_path_factory.mktemp("audit-cluster")
    common = [str(deployment["repo"]), "--secrets-dir", str(deployment["store"]), "--records-per-partition", "100"]
    events = {name: root / f"events-{name}" for name in ("cli", "submit")}

    def mm2gov(name: str, *extra: str, env: dict[str, str] | None = None):
        return run_cli("audit", *common, "--out", str(root / name), *extra, env=env, timeout=900)

    def local():
        return audit_in_process(*common, "--out", str(root / "local"))

    main = Path(spark_audit.main.__file__)  # as docs/audit.md finds the installed entry point
    command = [str(spark_submit()), "--master", cluster.url,
               "--jars", ",".join(str(jar) for jar in tools.spark_kafka_jars()),
               "--driver-java-options", " ".join((LOG4J2_OPTION, *QUICK_JVM)),
               *conf_args({**CLUSTER_CONF, **event_log_conf(events["submit"])}),
               str(main), *common, "--out", str(root / "submit"),
               *(arg for check in sorted(SUBMIT_CHECKS) for arg in ("--check", check))]
    env = {key: value for key, value in os.environ.items() if key != "PYSPARK_SUBMIT_ARGS"}

    def submit():
        return subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=root,
                              env={**env, "PYSPARK_PYTHON": sys.executable, "JAVA_HOME": str(java_home())})

    # The three at once on the same live data (each worker offers a core to each application): their
    # start-ups and waits overlap, and two applications share the cluster as they would in production.
    # `mm2gov audit` takes Spark settings from Spark's own configuration: PYSPARK_SUBMIT_ARGS (submit_args).
    with ThreadPoolExecutor(3) as pool:
        done = {"local": pool.submit(local),
                "cli": pool.submit(mm2gov, "cli", "--spark-master", cluster.url,
                                   env=submit_args({**CLUSTER_CONF, **event_log_conf(events["cli"])})),
                "submit": pool.submit(submit)}
        return {"root": root, "events": events, "cluster": cluster,
                "done": {name: future.result() for name, future in done.items()}}


def normalized(value: Any) -> Any:
    """Evidence with every list sorted: Spark's collect_set order depends on partitioning."""
    if isinstance(value, dict):
        return {key: normalized(item) for key, item in value.items()}
    if isinstance(value, list):
        return sorted((normalized(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
    return value


def report(runs: dict[str, Any], name: str) -> dict[str, Any]:
    done = runs["done"][name]
    assert done.returncode == 1, f"{name}: exit {done.returncode}\n{done.stdout}\n{done.stderr[-4000:]}"
    return json.loads((runs["root"] / name / "audit.json").read_text())


def findings(document: dict[str, Any], checks: set[str] | None = None) -> list[str]:
    return sorted(json.dumps(normalized(f), sort_keys=True) for f in document["findings"]
                  if checks is None or f["check_id"] in checks)


def test_findings_on_the_cluster_equal_local_mode(runs):
    local = report(runs, "local")
    assert {f["check_id"] for f in local["findings"]} >= PLANTED_CHECKS
    smuggled = [f for f in local["findings"] if f["check_id"] == "RECORD_TENANT_MISMATCH"
                and f["resource_name"] == TOPICS["source"][0]]
    assert len(smuggled) == 1 and smuggled[0]["cluster"] == "source"
    cli = report(runs, "cli")
    assert findings(cli) == findings(local)
    assert cli["access_matrix"] == local["access_matrix"]
    submitted = report(runs, "submit")
    assert {f["check_id"] for f in submitted["findings"]} >= {"RECORD_TENANT_MISMATCH", "ACL_WILDCARD", "ACL_STALE"}
    assert findings(submitted) == findings(local, SUBMIT_CHECKS)
    for document in (cli, submitted):  # every record of every partition window, as in local mode
        assert document["run"]["records_scanned"] == local["run"]["records_scanned"] >= 41 + 20


@pytest.mark.parametrize("name", ["cli", "submit"])
def test_both_executors_fetched_the_kafka_jars_and_ran_the_record_scan(runs, name):
    report(runs, name)  # the run succeeded
    [events] = read_event_logs(runs["events"][name])  # one application per run
    executors = executors_added(events)
    assert len(executors) == 2, executors
    app_id = next(e["App ID"] for e in events if e.get("Event") == "SparkListenerApplicationStart")
    jars = {jar.name for jar in tools.spark_kafka_jars()}
    # Each worker ran one of the app's executors (by the IDs in its event log), which fetched every Kafka jar.
    # A worker's directory may hold one more: as an application ends, its executors exit before the master has
    # removed it, and the master can start a replacement that is killed before it ever registers (seen in a
    # fresh-clone run: executor 2 on worker-1, 150 ms old).
    for worker in range(2):
        app_dir = runs["cluster"].work_dir(worker) / app_id
        [executor] = executors & {p.name for p in app_dir.iterdir()}
        assert jars <= {p.name for p in (app_dir / executor).iterdir()}, app_dir / executor
    scans = stages_of_jobs(events, SCAN_JOB)
    by_cluster = {}
    for stage in scans:
        alias = stage.job_description.removeprefix(SCAN_JOB).strip()
        by_cluster[alias] = max(by_cluster.get(alias, stage), stage, key=lambda s: s.tasks)  # the read stage
    assert set(by_cluster) == {"source", "target"}, scans
    source = by_cluster["source"]  # a task per partition: clu-a.scan's 4 (and other modules' topics)
    assert source.tasks >= TOPICS["source"][1], source
    assert set(source.executors) == executors, source  # tasks on both executors, as Spark recorded them
    assert by_cluster["target"].tasks >= TOPICS["target"][1]


@pytest.mark.parametrize("name", ["cli", "submit"])
def test_the_output_is_the_audits_own_progress_lines(runs, name):
    done = runs["done"][name]
    report(runs, name)
    # mm2gov's progress (stderr) and summary (stdout); spark-submit passes its Python's stderr to stdout
    output = done.stdout + done.stderr
    progress, summary = (output, output) if name == "submit" else (done.stderr, done.stdout)
    master = {"cli": runs["cluster"].url, "submit": "from spark-submit"}[name]
    assert_only_the_audits_output(progress, summary, master)
