# A flow's topic and group regexes must stay inside the tenant's prefixes:
# MM2 replicates whatever they match, other tenants' names included.
#
# Python gives, for each regex, its top-level alternatives and the literal
# prefix every match of an alternative starts with (docs/policies.md). An
# alternative is inside when that literal prefix (for an exact alternative, the
# literal itself) starts with one of the tenant's prefixes; a case-insensitive
# regex is never inside, as it also matches other-case names.
package mm2gov.rules.flows

import data.mm2gov.lib.input as lib

# [rule, kind, patterns field, regexes field, prefixes field]
checks := [
	["flow_topics_outside_scope", "topic", "topic_patterns", "topics", "topic_prefixes"],
	["flow_groups_outside_scope", "group", "group_patterns", "groups", "group_prefixes"],
]

# An alternative outside the prefixes. Every outside alternative of a regex
# gives the same violation (the message lists them all), so one per regex.
violations contains lib.violation(rule, "high", name, msg, loc) if {
	some [rule, kind, patterns, regexes, field] in checks
	some name, tenant in input.tenants
	prefixes := tenant[field]
	some i, flow in tenant.flows
	some j, pattern in flow[patterns]
	some alt in pattern.alternatives
	not strings.any_prefix_match(alt.literal_prefix, prefixes)
	not pattern.case_insensitive
	outside := [literal_text(a.literal_prefix) |
		some a in pattern.alternatives
		not strings.any_prefix_match(a.literal_prefix, prefixes)
	]
	problem := sprintf("can match names starting with %s", [concat(" or ", outside)])
	msg := message(name, flow, kind, pattern.regex, problem, "anchor it", prefixes)
	loc := lib.location(sprintf("tenants/%s/flows/%d/%s/%d", [name, i, regexes, j]))
}

violations contains lib.violation(rule, "high", name, msg, loc) if {
	some [rule, kind, patterns, regexes, field] in checks
	some name, tenant in input.tenants
	some i, flow in tenant.flows
	some j, pattern in flow[patterns]
	pattern.case_insensitive
	problem := "is case-insensitive ((?i)), so it can match other-case names"
	msg := message(name, flow, kind, pattern.regex, problem, "remove (?i) and anchor it", tenant[field])
	loc := lib.location(sprintf("tenants/%s/flows/%d/%s/%d", [name, i, regexes, j]))
}

literal_text("") := "any text"

literal_text(literal) := sprintf("'%s'", [literal]) if literal != ""

message(name, flow, kind, regex, problem, fix, prefixes) := sprintf(
	"flow %s: %s regex '%s' %s outside %s's %s prefixes %s; %s at a prefix, e.g. '%s'",
	[lib.flow_id(flow), kind, regex, problem, name, kind, lib.list_text(prefixes), fix, lib.anchored_example(prefixes[0])],
) if {
	count(prefixes) > 0
} else := sprintf(
	"flow %s: %s regex '%s' %s outside %s's %s prefixes, and %s declares none; add %s_prefixes and %s at one",
	[lib.flow_id(flow), kind, regex, problem, name, kind, name, kind, fix],
)
