"""The evidence contract between the detectors and the report: who reaches whose data.

A finding's `evidence` is a JSON object (CONTRACT.md). Most of its keys are the
detector's own (operations, bindings, offsets...). The keys below are shared:
the detectors write them through `findings.to_findings(..., reach=...)` and the
report reads them through `reach_of` / `reach_unknown_of`, never by spelling the
names itself, so the two cannot drift apart.

- `reach` (REACH): a list of {"accessor_tenant": A, "owner_tenant": B}, sorted,
  without duplicates, A never equal to B: the finding shows tenant A able to reach
  (or already holding) data that tenant B owns. A is the tenant of the principal,
  group or topic that reaches; "*" (EVERY_PRINCIPAL) when the principal is
  `User:*` (every tenant), "" (UNDECLARED) when no tenant declares the principal.
  B is always a declared tenant. One finding may reach several tenants (a prefix
  covering two tenants' names) or be several tenants reaching each other (an
  MM2 internal topic shared by their flows).
- `reach_unknown` (REACH_UNKNOWN): present only when the finding shows reach
  that cannot be attributed to tenants, and says why (a cluster-level grant
  reaches every tenant's ACLs and users; records marked with no declared
  tenant's marker; a topic under no tenant's name). Its pairs, if any, are in
  `reach`.

Every check declares what it says about reach: `to_findings` takes a required
`reach` argument, either `reaches(...)` / `among(...)` (the check reports
cross-tenant reach: the finding carries `reach`, maybe empty, and maybe
`reach_unknown`) or `NO_REACH` (the check's findings are not about one tenant
reaching another's data: neither key). The report's tenant x tenant matrix counts
a finding once in each of its `reach` cells.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import Column

REACH = "reach"
ACCESSOR_TENANT = "accessor_tenant"
OWNER_TENANT = "owner_tenant"
REACH_UNKNOWN = "reach_unknown"
EVERY_PRINCIPAL = "*"  # accessor_tenant of `User:*`: every tenant
UNDECLARED = ""  # accessor_tenant of a principal no tenant declares
REACH_FIELDS = (ACCESSOR_TENANT, OWNER_TENANT)
REACH_TYPE = f"array<struct<{ACCESSOR_TENANT}: string, {OWNER_TENANT}: string>>"


@dataclass(frozen=True)
class Reach:
    """What a detector's findings say about cross-tenant reach, as Spark columns.

    `pairs`: array<struct<accessor_tenant, owner_tenant>> (REACH_TYPE), or None for a
    check whose findings are not about reach (`NO_REACH`). `unknown`: a string column,
    null unless the reach cannot be attributed to tenants."""

    pairs: Column | None
    unknown: Column | None = None

    @property
    def stated(self) -> bool:
        return self.pairs is not None


NO_REACH = Reach(None)


def _clean(pairs: Column) -> Column:
    """Distinct, sorted pairs without a null or empty owner and without a tenant reaching itself."""
    from pyspark.sql import functions as F

    kept = F.filter(pairs, lambda p: p[OWNER_TENANT].isNotNull() & (p[OWNER_TENANT] != "")
                    & (p[OWNER_TENANT] != p[ACCESSOR_TENANT]))
    return F.array_sort(F.array_distinct(kept)).cast(REACH_TYPE)


def reaches(accessor: Column, owners: Column, unknown: Column | None = None) -> Reach:
    """`accessor` (string; null becomes UNDECLARED) reaches each tenant of `owners` (an array of
    strings; null: none). Nulls, "" and the accessor itself are dropped from the owners.
    `unknown`: why (part of) the reach cannot be named, or null."""
    from pyspark.sql import functions as F

    owners = F.coalesce(owners.cast("array<string>"), F.array().cast("array<string>"))
    who = F.coalesce(accessor.cast("string"), F.lit(UNDECLARED))
    pairs = F.transform(owners, lambda owner: F.struct(who.alias(ACCESSOR_TENANT), owner.alias(OWNER_TENANT)))
    return Reach(_clean(pairs), unknown)


def reaches_one(accessor: Column, owner: Column, unknown: Column | None = None) -> Reach:
    """`accessor` reaches `owner` (a string; null or "": nobody named)."""
    from pyspark.sql import functions as F

    return reaches(accessor, F.array(owner.cast("string")), unknown)


def among(tenants: Column, unknown: Column | None = None) -> Reach:
    """Every tenant of `tenants` (array of strings) reaches every other one: e.g. an internal
    topic shared by several tenants' MM2s."""
    from pyspark.sql import functions as F

    pairs = F.flatten(F.transform(tenants, lambda a: F.transform(
        tenants, lambda b: F.struct(a.alias(ACCESSOR_TENANT), b.alias(OWNER_TENANT)))))
    return Reach(_clean(pairs), unknown)


def with_reach(evidence: Column, reach: Reach) -> Column:
    """The detector's evidence struct plus the contract's fields (none for NO_REACH)."""
    from pyspark.sql import functions as F

    if not reach.stated:
        return evidence
    unknown = reach.unknown if reach.unknown is not None else F.lit(None)
    return evidence.withField(REACH, reach.pairs).withField(REACH_UNKNOWN, unknown.cast("string"))


# --- the report side: plain Python over the parsed evidence -----------------------------------------

def reach_of(evidence: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (accessor_tenant, owner_tenant) pairs a finding's evidence states: distinct, sorted, only
    well-formed ones (strings, a non-empty owner, accessor != owner). [] when the finding states none."""
    pairs = evidence.get(REACH) if isinstance(evidence, Mapping) else None
    if not isinstance(pairs, list):
        return []
    found = set()
    for pair in pairs:
        if not isinstance(pair, Mapping):
            continue
        accessor, owner = pair.get(ACCESSOR_TENANT), pair.get(OWNER_TENANT)
        accessor = UNDECLARED if accessor is None else accessor
        if isinstance(accessor, str) and isinstance(owner, str) and owner and owner != accessor:
            found.add((accessor, owner))
    return sorted(found)


def reach_unknown_of(evidence: Mapping[str, Any]) -> str | None:
    """Why the finding's reach cannot be attributed to tenants, or None."""
    value = evidence.get(REACH_UNKNOWN) if isinstance(evidence, Mapping) else None
    return value if isinstance(value, str) and value else None


def states_reach(evidence: Mapping[str, Any]) -> bool:
    """Whether the finding comes from a check that reports reach (the evidence has the contract's keys)."""
    return isinstance(evidence, Mapping) and REACH in evidence


def reach_evidence(accessor: str, *owners: str, unknown: str | None = None) -> dict[str, Any]:
    """The contract's keys as a plain dict, for producers outside Spark (tests, fixtures):
    `{**detector_evidence, **reach_evidence("marketing", "payments")}`."""
    pairs = sorted({(accessor, owner) for owner in owners if owner and owner != accessor})
    out: dict[str, Any] = {REACH: [{ACCESSOR_TENANT: a, OWNER_TENANT: b} for a, b in pairs]}
    if unknown:
        out[REACH_UNKNOWN] = unknown
    return out
