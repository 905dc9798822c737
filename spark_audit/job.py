"""The audit job: repo → snapshot (driver metadata + Spark record scan) → checks → reports + history.

`run_audit` is what `mm2gov audit` runs locally and what `spark_audit/main.py` runs under
`spark-submit`. Progress goes to `progress` (the terminal); nothing secret does.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from governance import tools
from governance.config.loader import Inventory
from governance.kafka.apply import client_config
from governance.model import tenancy as resolved
from governance.secrets.store import SecretStore
from spark_audit.catalog import catalog
from spark_audit.collect import collect
from spark_audit.model import snapshot_frames
from spark_audit.records import offset_window, read_records
from spark_audit.report import AuditRun, history_row, write_reports
from spark_audit.run import run_checks, spark_session
from spark_audit.tenancy import build_tenancy

log = logging.getLogger("mm2gov.audit")
SKIPPED_TOPICS = ("__", "_schemas", "mm2gov.ownership")
SCAN_JOB = "mm2gov record scan"  # the description of each cluster's scan job: "mm2gov record scan <alias>"


@dataclasses.dataclass(frozen=True)
class AuditOptions:
    out: Path
    formats: frozenset[str] = frozenset({"json", "html", "sarif"})
    master: str = "local[2]"
    records_per_partition: int = 1000
    checks: tuple[str, ...] | None = None


def _scan_topics(topic_rows: list[tuple], alias: str) -> dict[str, int]:
    return {topic: partitions for cluster, topic, partitions in topic_rows
            if cluster == alias and not topic.startswith(SKIPPED_TOPICS) and partitions}


def run_audit(inventory: Inventory, tenancy: resolved.Tenancy, store: SecretStore, options: AuditOptions,
              progress: Callable[[str], None] = log.info) -> AuditRun:
    """Audit the live clusters of `inventory` against the resolved tenancy (the repo's policy decision)."""
    began = time.perf_counter()
    started = dt.datetime.now(dt.UTC).replace(microsecond=0)
    progress(f"collecting metadata from {len(inventory.clusters)} clusters")
    collected = collect(inventory.clusters, store, progress)
    progress(f"starting Spark ({options.master or 'from spark-submit'})")
    jars = {"spark.jars": ",".join(map(str, tools.spark_kafka_jars()))} if options.master else {}  # else --jars
    spark = spark_session(options.master, settings=jars)
    frames = build_tenancy(spark, tenancy, inventory.clusters)
    markers = sorted({t.record_marker.header for t in tenancy if t.record_marker})
    snapshot = snapshot_frames(spark, collected.rows, collected.partial)
    records = snapshot.records
    scanned = 0
    for alias, cluster in sorted(inventory.clusters.items()):
        if alias in collected.partial or f"{alias}:topics" in collected.partial:
            continue
        config = client_config(alias, cluster, store)
        try:
            window = offset_window(config, _scan_topics(collected.rows["topics"], alias),
                                   options.records_per_partition)
            frame = read_records(spark, alias, config, window, markers).cache()
            spark.sparkContext.setJobDescription(f"{SCAN_JOB} {alias}")  # names its stages (UI, event log)
            try:
                count = frame.count()
            finally:
                spark.sparkContext.setJobDescription(None)
        except Exception as exc:  # noqa: BLE001 - a refused or failed scan is a gap, reported as such
            reason = type(exc).__name__
            collected.partial.append(f"{alias}:records")
            collected.problems.append(f"cluster {alias}: records not scanned ({reason})")
            progress(f"{alias}: records not scanned ({reason})")
            continue
        scanned += count
        records = records.unionByName(frame)
        progress(f"{alias}: scanned {count} records in {sum(len(p) for p in window.values())} partitions")
    snapshot = dataclasses.replace(snapshot, records=records, partial=tuple(collected.partial))
    progress("running checks")
    findings = [_finding(row.asDict()) for row in run_checks(spark, snapshot, frames, options.checks, progress)]
    run = AuditRun(
        run_id=started.strftime("%Y%m%dT%H%M%SZ"), started=started.isoformat(), repo=str(inventory.root),
        clusters=sorted(inventory.clusters), partial=list(collected.partial), problems=list(collected.problems),
        tenants=sorted(tenancy.tenants), findings=findings,
        checks=dict(catalog()),
        records_scanned=scanned, seconds=round(time.perf_counter() - began, 1))
    history = _history(spark, options.out / "history", run)
    written = write_reports(run, history, options.out, set(options.formats))
    progress("wrote " + ", ".join(str(path) for path in written.values()))
    return run


def _finding(row: dict[str, Any]) -> dict[str, Any]:
    try:
        row["evidence"] = json.loads(row.get("evidence") or "{}")
    except ValueError:
        row["evidence"] = {"raw": row.get("evidence")}
    return row


def _history(spark, folder: Path, run: AuditRun) -> list[dict[str, Any]]:
    """Past runs from OUT/history (Parquet), with this run appended to it."""
    row = history_row(run)
    spark.createDataFrame([row]).coalesce(1).write.mode("append").parquet(str(folder))
    return [r.asDict() for r in spark.read.parquet(str(folder)).collect()]
