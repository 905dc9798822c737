"""The detectors: one module per check, `<check_id_lower>.py` with `CHECK_ID` and `detect()`.

`detect(snapshot, tenancy) -> findings` is a pure function of DataFrames. What a check says about
itself (title, severity, rationale, remediation, what it catches) is declared once, outside the
code, in `audits/<check_id_lower>/metadata.yaml` (read by spark_audit.catalog), beside the check's
checkov-style fixtures `audits/<check_id_lower>/{passed,failed}/*.yaml` (tests/unit/test_audits.py
runs each through its detector). To add a check: its module here and a line below, its audits/
folder with metadata.yaml and at least one passed and one failed estate (tests/unit/test_audits.py
keeps the two one-to-one). `common.py` holds what detectors share.
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
    mm2_principal_without_quota,
    principal_lookalike,
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
    principal_lookalike,
    topic_unowned,
    topic_scope_mismatch,
    group_cross_tenant,
    record_tenant_mismatch,
    replication_gap,
    mm2_principal_without_quota,
)}
# Checks whose findings state cross-tenant reach (spark_audit.evidence: `reach`, `reach_unknown`);
# the others pass NO_REACH. The report's tenant x tenant matrix is made of these.
REACH_CHECKS = ("ACL_CROSS_TENANT", "ACL_WILDCARD", "ACL_PREFIX_OVERLAP", "MM2_PRINCIPAL_OVERREACH",
                "INTERNAL_TOPIC_EXPOSED", "TOPIC_SCOPE_MISMATCH", "GROUP_CROSS_TENANT", "RECORD_TENANT_MISMATCH",
                "PRINCIPAL_LOOKALIKE")
ACL_CHECKS = ("ACL_CROSS_TENANT", "ACL_WILDCARD", "ACL_PREFIX_OVERLAP", "MM2_PRINCIPAL_OVERREACH", "ACL_STALE",
              "PRINCIPAL_LOOKALIKE")
