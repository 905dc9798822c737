"""audit.sarif: SARIF 2.1.0 for code-scanning dashboards. One rule per check of the catalog, one
result per finding, located by the logical name `cluster/resource_type/resource_name`."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from governance.render.violations import SARIF_LEVEL
from spark_audit.report.audit_run import TOOL, AuditRun, checks_of, sorted_findings
from spark_audit.report.replication import replication_summary
from spark_audit.report.summary import summary

SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0", "info": "0.0"}


def rule_name(check_id: str) -> str:
    """ACL_CROSS_TENANT -> AclCrossTenant (SARIF's reportingDescriptor.name)."""
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", check_id) if part)


def fully_qualified_name(f: Mapping[str, Any]) -> str:
    return f"{f['cluster']}/{f['resource_type']}/{f['resource_name']}"


def _fingerprint(f: Mapping[str, Any]) -> str:
    key = "\x1f".join(str(f[k]) for k in ("check_id", "tenant", "cluster", "resource_type", "resource_name",
                                           "principal"))
    return hashlib.sha256(key.encode()).hexdigest()


def sarif_document(run: AuditRun) -> dict[str, Any]:
    """SARIF 2.1.0: one rule per check of the catalog (and per unknown check id seen), one result
    per finding located by a logical location `cluster/resource_type/resource_name`. A partial run's
    invocation has executionSuccessful false and one toolExecutionNotification per problem. The run's
    properties carry the per-flow replication rates (`replication`, as in audit.json)."""
    findings = sorted_findings(run)
    checks = checks_of(run, findings)
    index = {cid: i for i, cid in enumerate(checks)}
    rules = []
    for cid, c in checks.items():
        rule: dict[str, Any] = {
            "id": cid, "name": rule_name(cid),
            "shortDescription": {"text": c["title"]},
            "fullDescription": {"text": c["rationale"] or c["title"]},
            "help": {"text": c["remediation"] or c["title"]},
            "defaultConfiguration": {"level": SARIF_LEVEL.get(c["severity"], "error")},
            "properties": {"severity": c["severity"], "tags": ["security", "kafka", "mirrormaker2", "tenancy"],
                           "catches": c["catches"]},
        }
        if c["severity"] in SECURITY_SEVERITY:
            rule["properties"]["security-severity"] = SECURITY_SEVERITY[c["severity"]]
        rules.append(rule)
    results = []
    for f in findings:
        results.append({
            "ruleId": f["check_id"], "ruleIndex": index[f["check_id"]],
            "level": SARIF_LEVEL.get(f["severity"], "error"),
            "message": {"text": f["message"] or checks[f["check_id"]]["title"]},
            "locations": [{"logicalLocations": [{"fullyQualifiedName": fully_qualified_name(f),
                                                 "name": f["resource_name"], "kind": "resource"}]}],
            "partialFingerprints": {"mm2gov/finding/v1": _fingerprint(f)},
            "properties": {"severity": f["severity"], "tenant": f["tenant"], "principal": f["principal"],
                           "cluster": f["cluster"], "remediation": f["remediation"], "evidence": f["evidence"]},
        })
    notifications = [{"level": "error", "descriptor": {"id": "PARTIAL_SNAPSHOT"}, "message": {"text": problem}}
                     for problem in run.problems]
    if run.partial and not run.problems:
        notifications = [{"level": "error", "descriptor": {"id": "PARTIAL_SNAPSHOT"},
                          "message": {"text": f"not collected: {scope}"}} for scope in run.partial]
    invocation: dict[str, Any] = {"executionSuccessful": not run.is_partial,
                                  "properties": {"partial": list(run.partial)}}
    if run.started:
        invocation["startTimeUtc"] = run.started
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    s = summary(run)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {**TOOL, "rules": rules}},
            "automationDetails": {"id": f"mm2gov-audit/{run.run_id}"},
            "invocations": [invocation],
            "results": results,
            "properties": {"run_id": run.run_id, "repo": run.repo, "clusters": list(run.clusters),
                           "status": s["status"], "by_severity": s["by_severity"],
                           "replication": replication_summary(run)},
        }],
    }
