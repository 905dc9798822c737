"""The detectors: one module per check, each `CHECK_ID` + `detect(snapshot, tenancy) -> findings`.

A detector is a pure function of DataFrames; its severity, remediation and
rationale are its catalog entry `audits/checks/<CHECK_ID>.yaml`. To add a check:
write the module, its YAML, list it here, and give it a PASSED and a FAILED
fixture in tests/unit/test_audit_checks.py.
"""

from __future__ import annotations

from types import ModuleType

from spark_audit.checks import (
    acl_cross_tenant,
    acl_prefix_overlap,
    acl_stale,
    acl_wildcard,
    group_cross_tenant,
    internal_topic_exposed,
    mm2_principal_overreach,
    record_tenant_mismatch,
    replication_gap,
    topic_scope_mismatch,
    topic_unowned,
)

CHECKS: dict[str, ModuleType] = {module.CHECK_ID: module for module in (
    acl_cross_tenant,
    acl_wildcard,
    acl_prefix_overlap,
    mm2_principal_overreach,
    internal_topic_exposed,
    acl_stale,
    topic_unowned,
    topic_scope_mismatch,
    group_cross_tenant,
    record_tenant_mismatch,
    replication_gap,
)}
# Checks whose findings state cross-tenant reach (spark_audit.evidence: `reach`, `reach_unknown`);
# the others pass NO_REACH. The report's tenant x tenant matrix is made of these.
REACH_CHECKS = ("ACL_CROSS_TENANT", "ACL_WILDCARD", "ACL_PREFIX_OVERLAP", "MM2_PRINCIPAL_OVERREACH",
                "INTERNAL_TOPIC_EXPOSED", "TOPIC_SCOPE_MISMATCH", "GROUP_CROSS_TENANT", "RECORD_TENANT_MISMATCH")
ACL_CHECKS = ("ACL_CROSS_TENANT", "ACL_WILDCARD", "ACL_PREFIX_OVERLAP", "MM2_PRINCIPAL_OVERREACH", "ACL_STALE")
