# Tenant prefixes are what ACLs, flows and audits use to tell tenants apart:
# each must end with a separator and no two tenants' may overlap.
package mm2gov.rules.prefixes

import data.mm2gov.lib.input as lib
import data.mm2gov.lib.names

kinds := {"topic": "topic_prefixes", "group": "group_prefixes"}

violations contains lib.violation("prefix_missing_separator", "high", name, msg, loc) if {
	some name, tenant in input.tenants
	some kind, field in kinds
	some i, prefix in tenant[field]
	not names.ends_with_separator(prefix)
	msg := sprintf(
		"tenant %s: %s prefix '%s' does not end with a separator (%s), so ACLs and regexes on it also cover other names that merely start with '%s'; end it with one, e.g. '%s%s'",
		[name, kind, prefix, concat(" ", sort(names.separators)), prefix, prefix, separator(kind)],
	)
	loc := lib.location(sprintf("tenants/%s/%s/%d", [name, field, i]))
}

# Reported to both tenants of an overlapping pair, each at the location of
# its own prefix.
violations contains lib.violation("prefix_overlap", "high", name, msg, loc) if {
	some [kind, name, i, prefix, other, other_prefix] in overlaps
	msg := overlap_message(kind, name, prefix, other, other_prefix)
	loc := lib.location(sprintf("tenants/%s/%s/%d", [name, kinds[kind], i]))
}

# [kind, tenant, index, prefix, other tenant, other prefix] for both sides of
# every overlapping pair of prefixes of two different tenants. Each pair is
# found from its longer (or equal) prefix, whose leading part is one of the
# candidate shorter sides (lib.shorter_sides) and declared by another tenant.
overlaps contains entry if {
	some kind, _ in kinds
	entries := prefix_entries(kind)
	candidates := lib.shorter_sides(entries)
	count(candidates) > 0
	lengths := {count(c) | some c in candidates}
	owners := prefix_owners(kind)
	some [prefix, _] in entries
	some stem in lib.leading_candidates(prefix, candidates, lengths)
	some [name, i] in owners[prefix]
	some [other, j] in owners[stem]
	other != name
	some entry in [
		[kind, name, i, prefix, other, stem],
		[kind, other, j, stem, name, prefix],
	]
}

prefix_entries("topic") := lib.topic_prefix_entries

prefix_entries("group") := lib.group_prefix_entries

prefix_owners("topic") := lib.topic_prefix_owners

prefix_owners("group") := lib.group_prefix_owners

overlap_message(kind, name, prefix, other, other_prefix) := sprintf(
	"tenant %s: %s prefix '%s' is also declared by tenant %s, so their ACLs, flows and audits cover each other's names; rename one of them: prefixes made of the tenant name and '.' or '_' (which tenant names cannot contain), e.g. '%s.' and '%s.', never overlap",
	[name, kind, prefix, other, name, other],
) if {
	prefix == other_prefix
} else := sprintf(
	"tenant %s: %s prefix '%s' overlaps tenant %s's %s prefix '%s' (one starts with the other), so their ACLs, flows and audits cover each other's names; rename one of them: prefixes made of the tenant name and '.' or '_' (which tenant names cannot contain), e.g. '%s.' and '%s.', never overlap",
	[name, kind, prefix, other, kind, other_prefix, name, other],
)

separator("topic") := "."

separator("group") := "-"
