# What a KafkaMirrorMaker2 mirrors: every item of its topic and group patterns
# (as Kafka's LIST type splits them, analysed by mm2gov's webhook) stays inside
# its tenant's prefixes, and a missing pattern (MM2's default, '.*') is refused.
#
# Package mm2gov.admission.rules.mirrormaker, split by concern over mirrormaker*.rego;
# the object's parts every file reads (mirrors, their ends and declared flows, the
# Connect spec, connections, config maps) are in mirrormaker.rego.
package mm2gov.admission.rules.mirrormaker

import data.mm2gov.admission.lib
import data.mm2gov.lib.input as ilib

pattern_fields := ["topicsPattern", "topicsExcludePattern", "groupsPattern", "groupsExcludePattern"]

# items[i][field] = the items of mirror i's pattern field. MM2 reads each as
# Kafka's LIST type (split at commas, trimmed) and joins the items with "|";
# mm2gov's webhook splits them (input.mirror_patterns), so Rego never parses a
# list. A field set but not sent split stays one item, which has no facts and
# is refused; an unset field has no items.
items := {i: {field: field_items(i, mirror, field) | some field in pattern_fields} |
	some [i, mirror] in mirrors
}

field_items(i, mirror, field) := list if {
	list := input.mirror_patterns[i][field]
	is_array(list)
} else := [value] if {
	value := mirror[field]
	is_string(value)
} else := []

# facts[regex] = the facts of an item, for every item whose facts are
# complete; anything else is refused (admission_mm2_pattern_refused), never
# read as "no alternative outside". Each item is checked once however many
# rules read it (as a function, it was checked again at every call).
facts := {regex: f |
	some regex, f in input.patterns
	is_boolean(f.case_insensitive) # so f is an object: only objects have fields
	alternatives := f.alternatives
	is_array(alternatives)
	not "error" in object.keys(f)
	complete := [alt |
		some alt in alternatives
		is_string(alt.literal_prefix)
		is_boolean(alt.exact)
	]
	count(complete) > 0
	count(complete) == count(alternatives)
}

why_refused(regex) := sprintf("%v", [input.patterns[regex].error]) if {
	is_object(input.patterns[regex])
	"error" in object.keys(input.patterns[regex])
} else := "mm2gov's webhook sent no analysis of it"

# An alternative stays inside when its literal prefix starts with a tenant
# prefix (as flow_*_outside_scope decides). An exact empty alternative ("^$")
# matches no topic or group name, so it opens nothing.
alt_inside(alt, prefixes) if strings.any_prefix_match(alt.literal_prefix, prefixes)

alt_inside(alt, _) if {
	alt.exact
	alt.literal_prefix == ""
}

# [rule, field, kind, tenant prefixes field]
scope_checks := [
	["admission_mm2_topics_outside_scope", "topicsPattern", "topic", "topic_prefixes"],
	["admission_mm2_groups_outside_scope", "groupsPattern", "group", "group_prefixes"],
]

fix(prefixes) := sprintf("anchor it at one of them, e.g. '%s'", [ilib.anchored_example(prefixes[0])]) if {
	count(prefixes) > 0
} else := "the tenant declares none, so mirror nothing ('^$') or add the prefixes to the repo first"

# ---- patterns ----------------------------------------------------------------

violations contains lib.violation("admission_mm2_pattern_refused", "high", msg, path) if {
	checked
	some i, per_field in items
	some field, field_items in per_field
	some regex in field_items
	not facts[regex]
	path := lib.pointer(["spec", "mirrors", i, field])
	msg := sprintf(
		"%s: mirror %d %s item '%s' cannot be checked (%s), so it is refused; rewrite it with constructs Java and Python read alike (no \\p{..}, \\Q..\\E, named groups, nested classes, (?u)/(?U)/(?d) flags)",
		[lib.subject, i, field, regex, why_refused(regex)],
	)
}

# No pattern means MM2's default, ".*": every name of the source cluster.
violations contains lib.violation(rule, "high", msg, path) if {
	checked
	some [rule, field, kind, prefixes_field] in scope_checks
	some [i, mirror] in mirrors
	count(items[i][field]) == 0
	needed(field, mirror)
	prefixes := object.get(lib.tenant, prefixes_field, [])
	path := lib.pointer(["spec", "mirrors", i, field])
	msg := sprintf(
		"%s: mirror %d has no %s, so MirrorMaker 2 uses its default '.*' and mirrors every %s of the source cluster, outside tenant %s's %s prefixes %s; set %s and %s",
		[lib.subject, i, field, kind, lib.tenant_name, kind, ilib.list_text(prefixes), field, fix(prefixes)],
	)
}

# Groups are only read by the checkpoint connector.
needed("topicsPattern", _)

needed("groupsPattern", mirror) if "checkpointConnector" in object.keys(mirror)

violations contains lib.violation(rule, "high", msg, path) if {
	checked
	some [rule, field, kind, prefixes_field] in scope_checks
	prefixes := object.get(lib.tenant, prefixes_field, [])
	some i, per_field in items
	some regex in per_field[field]
	f := facts[regex]
	not f.case_insensitive
	outside := [literal_text(alt.literal_prefix) |
		some alt in f.alternatives
		not alt_inside(alt, prefixes)
	]
	count(outside) > 0
	path := lib.pointer(["spec", "mirrors", i, field])
	msg := sprintf(
		"%s: mirror %d %s regex '%s' can match %s names starting with %s, outside tenant %s's %s prefixes %s; %s",
		[lib.subject, i, field, regex, kind, concat(" or ", outside), lib.tenant_name, kind, ilib.list_text(prefixes), fix(prefixes)],
	)
}

violations contains lib.violation(rule, "high", msg, path) if {
	checked
	some [rule, field, kind, prefixes_field] in scope_checks
	some i, per_field in items
	some regex in per_field[field]
	facts[regex].case_insensitive
	prefixes := object.get(lib.tenant, prefixes_field, [])
	path := lib.pointer(["spec", "mirrors", i, field])
	msg := sprintf(
		"%s: mirror %d %s regex '%s' is case-insensitive ((?i)), so it can match other-case %s names outside tenant %s's %s prefixes %s; remove (?i) and %s",
		[lib.subject, i, field, regex, kind, lib.tenant_name, kind, ilib.list_text(prefixes), fix(prefixes)],
	)
}

literal_text("") := "any text"

literal_text(literal) := sprintf("'%s'", [literal]) if literal != ""
