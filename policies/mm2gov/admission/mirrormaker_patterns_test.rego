# Tests of mirrormaker_patterns.rego; the fixtures (mirror, req, ...) are mirrormaker_test.rego's.
package mm2gov.admission.rules.mirrormaker_test

import data.mm2gov.admission.lib_test as t
import data.mm2gov.lib.input_test as fx

# ---- patterns ----------------------------------------------------------------

test_refused_pattern_fires if {
	d := decide_mirror({"topicsExcludePattern": "__.*,\\p{L}x"}, {"\\p{L}x": {"error": "\\p{...} Unicode classes are Java-only"}})
	t.rules(d) == {"admission_mm2_pattern_refused"}
	t.hits(d, "admission_mm2_pattern_refused") == {"spec/mirrors/0/topicsExcludePattern"}
	contains(t.message(d, "admission_mm2_pattern_refused"), `topicsExcludePattern item '\p{L}x' cannot be checked (\p{...} Unicode classes are Java-only)`)
}

test_pattern_without_analysis_fires if {
	d := decide_mirror({"topicsPattern": "payments\\.new.*"}, {})
	t.rules(d) == {"admission_mm2_pattern_refused"}
	contains(t.message(d, "admission_mm2_pattern_refused"), "mm2gov's webhook sent no analysis of it")
}

test_incomplete_facts_are_refused if {
	every broken in [
		{"regex": "payments-.*", "case_insensitive": false},
		{"regex": "payments-.*", "case_insensitive": false, "alternatives": []},
		{"regex": "payments-.*", "case_insensitive": "no", "alternatives": [{"literal_prefix": "payments-", "exact": false}]},
		{"regex": "payments-.*", "case_insensitive": false, "alternatives": [{"literal_prefix": 1, "exact": false}]},
		"payments-",
	] {
		d := decide_mirror({}, {"payments-.*": broken})
		t.hits(d, "admission_mm2_pattern_refused") == {"spec/mirrors/0/groupsPattern"}
	}
}

test_topics_outside_scope_fires if {
	d := decide_mirror({"topicsPattern": "marketing\\..*"}, {"marketing\\..*": t.facts("marketing\\..*", "marketing.")})
	t.rules(d) == {"admission_mm2_topics_outside_scope"}
	t.hits(d, "admission_mm2_topics_outside_scope") == {"spec/mirrors/0/topicsPattern"}
	d.violations[0].severity == "high"
	d.violations[0].tenant == "payments"
	t.message(d, "admission_mm2_topics_outside_scope") == `KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 topicsPattern regex 'marketing\..*' can match topic names starting with 'marketing.', outside tenant payments's topic prefixes [payments.]; anchor it at one of them, e.g. 'payments\..*'`
}

nothing := {"regex": "", "case_insensitive": false, "alternatives": [{"literal_prefix": "", "exact": true}]}

test_every_comma_item_is_checked if {
	both := {
		"regex": "pay.*|payments\\.x",
		"case_insensitive": false,
		"alternatives": [{"literal_prefix": "pay", "exact": false}, {"literal_prefix": "", "exact": false}, {"literal_prefix": "payments.x", "exact": true}],
	}
	d := decide_mirror({"topicsPattern": "payments\\.orders.*, pay.*|payments\\.x ,"}, {"pay.*|payments\\.x": both, "": nothing})
	t.rules(d) == {"admission_mm2_topics_outside_scope"}
	contains(t.message(d, "admission_mm2_topics_outside_scope"), "starting with 'pay' or any text, outside")
}

test_exact_alternatives_inside_pass if {
	exact := {"regex": "payments\\.refunds", "case_insensitive": false, "alternatives": [{"literal_prefix": "payments.refunds", "exact": true}]}
	nothing := {"regex": "^$", "case_insensitive": false, "alternatives": [{"literal_prefix": "", "exact": true}]}
	d := decide_mirror({"topicsPattern": "payments\\.refunds", "groupsPattern": "^$"}, {"payments\\.refunds": exact, "^$": nothing})
	d.allowed
}

# Kafka's LIST type reads " , " as two empty items: MM2 then matches only the
# empty name, which no topic has.
test_empty_items_match_nothing if {
	decide_mirror({"topicsPattern": " , "}, {"": nothing}).allowed
	d := decide_mirror({"topicsPattern": " , "}, {})
	t.rules(d) == {"admission_mm2_pattern_refused"}
}

# A pattern field that is set but was not sent split is one item without facts.
test_unsplit_field_is_refused if {
	two := req({}, {"topicsPattern": "payments\\.orders.*,payments\\.refunds"}, {"payments\\.refunds": t.facts("payments\\.refunds", "payments.refunds")})
	t.decide(two).allowed
	d := t.decide(object.union(two, {"mirror_patterns": [{}]}))
	t.rules(d) == {"admission_mm2_pattern_refused"}
	t.hits(d, "admission_mm2_pattern_refused") == {"spec/mirrors/0/topicsPattern"}
}

test_missing_topics_pattern_fires if {
	every absent in [{"topicsPattern": ""}, {"topicsPattern": 7}] {
		d := decide_mirror(absent, {})
		t.rules(d) == {"admission_mm2_topics_outside_scope"}
		contains(t.message(d, "admission_mm2_topics_outside_scope"), "mirror 0 has no topicsPattern, so MirrorMaker 2 uses its default '.*'")
	}
	no_field := object.remove(mirror, ["topicsPattern"])
	d := t.decide(req({"mirrors": [no_field]}, {}, {}))
	t.hits(d, "admission_mm2_topics_outside_scope") == {"spec/mirrors/0/topicsPattern"}
}

test_case_insensitive_topics_fire if {
	ci := object.union(t.facts("(?i)payments\\..*", "payments."), {"case_insensitive": true})
	d := decide_mirror({"topicsPattern": "(?i)payments\\..*"}, {"(?i)payments\\..*": ci})
	t.rules(d) == {"admission_mm2_topics_outside_scope"}
	contains(t.message(d, "admission_mm2_topics_outside_scope"), "is case-insensitive ((?i)), so it can match other-case topic names")
}

test_groups_outside_scope_fires if {
	d := decide_mirror({"groupsPattern": ".*"}, {".*": t.facts(".*", "")})
	t.rules(d) == {"admission_mm2_groups_outside_scope"}
	t.hits(d, "admission_mm2_groups_outside_scope") == {"spec/mirrors/0/groupsPattern"}
	contains(t.message(d, "admission_mm2_groups_outside_scope"), "can match group names starting with any text, outside tenant payments's group prefixes [payments-]; anchor it at one of them, e.g. 'payments-.*'")
}

test_case_insensitive_groups_fire if {
	ci := object.union(t.facts("(?i)payments-.*", "payments-"), {"case_insensitive": true})
	d := decide_mirror({"groupsPattern": "(?i)payments-.*"}, {"(?i)payments-.*": ci})
	t.rules(d) == {"admission_mm2_groups_outside_scope"}
}

test_missing_groups_pattern_without_checkpoints_pass if {
	no_groups := object.remove(mirror, ["groupsPattern", "checkpointConnector"])
	t.decide(req({"mirrors": [no_groups]}, {}, {})).allowed
}

test_missing_groups_pattern_with_checkpoints_fires if {
	no_groups := object.union(object.remove(mirror, ["groupsPattern"]), {"checkpointConnector": {"config": {"emit.checkpoints.enabled": "false"}}})
	d := t.decide(req({"mirrors": [no_groups]}, {}, {}))
	t.rules(d) == {"admission_mm2_groups_outside_scope"}
	contains(t.message(d, "admission_mm2_groups_outside_scope"), "mirror 0 has no groupsPattern")
}

test_groups_without_group_prefixes_fire if {
	no_prefixes := fx.repo([object.union(fx.payments, {"group_prefixes": []})])
	d := t.decide_in(with_mirror({}), no_prefixes)
	t.rules(d) == {"admission_mm2_groups_outside_scope"}
	contains(t.message(d, "admission_mm2_groups_outside_scope"), "the tenant declares none, so mirror nothing ('^$')")
}
