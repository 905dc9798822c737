"""The checks: one folder per check, `<check_id_lower>/` with `check.py` and `metadata.yaml`.

`check.py` is the detector, `CHECK_ID` + `detect(snapshot, tenancy) -> findings`, a pure function
of DataFrames; `metadata.yaml` beside it is the check's catalog entry (title, severity, rationale,
remediation, what it catches), read as package data by spark_audit.catalog. To add a check: its
folder with both files (and an empty-but-for-a-docstring `__init__.py`), a line here, and a PASSED
and a FAILED fixture in tests/unit/test_audit_checks.py. `common.py` holds what detectors share.
"""

from __future__ import annotations

from types import ModuleType

from spark_audit.checks.acl_cross_tenant import check as acl_cross_tenant
from spark_audit.checks.acl_prefix_overlap import check as acl_prefix_overlap
from spark_audit.checks.acl_stale import check as acl_stale
from spark_audit.checks.acl_wildcard import check as acl_wildcard
from spark_audit.checks.group_cross_tenant import check as group_cross_tenant
from spark_audit.checks.internal_topic_exposed import check as internal_topic_exposed
from spark_audit.checks.mm2_principal_overreach import check as mm2_principal_overreach
from spark_audit.checks.principal_lookalike import check as principal_lookalike
from spark_audit.checks.record_tenant_mismatch import check as record_tenant_mismatch
from spark_audit.checks.replication_gap import check as replication_gap
from spark_audit.checks.topic_scope_mismatch import check as topic_scope_mismatch
from spark_audit.checks.topic_unowned import check as topic_unowned

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
)}
# Checks whose findings state cross-tenant reach (spark_audit.evidence: `reach`, `reach_unknown`);
# the others pass NO_REACH. The report's tenant x tenant matrix is made of these.
REACH_CHECKS = ("ACL_CROSS_TENANT", "ACL_WILDCARD", "ACL_PREFIX_OVERLAP", "MM2_PRINCIPAL_OVERREACH",
                "INTERNAL_TOPIC_EXPOSED", "TOPIC_SCOPE_MISMATCH", "GROUP_CROSS_TENANT", "RECORD_TENANT_MISMATCH",
                "PRINCIPAL_LOOKALIKE")
ACL_CHECKS = ("ACL_CROSS_TENANT", "ACL_WILDCARD", "ACL_PREFIX_OVERLAP", "MM2_PRINCIPAL_OVERREACH", "ACL_STALE",
              "PRINCIPAL_LOOKALIKE")
