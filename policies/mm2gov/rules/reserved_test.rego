package mm2gov.rules.reserved_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.rules.reserved

# The reserved lists as governance/model/names.py sends them (a subset).
reserved_input := {
	"topic": [
		{"text": "mm2gov.", "prefix": true, "why": "mm2gov's own topics"},
		{"text": "_", "prefix": true, "why": "Kafka's internal topics"},
		{"text": "heartbeats", "prefix": false, "why": "MM2's heartbeats topic"},
		{"text": "onprem.", "prefix": true, "why": "remote topics of onprem"},
	],
	"group": [{"text": "onprem-mm2", "prefix": false, "why": "MM2's default group"}],
	"user": [
		{"text": "ANONYMOUS", "prefix": false, "why": "unauthenticated"},
		{"text": "mm2-", "prefix": true, "why": "MM2 principals"},
	],
	"namespace": [
		{"text": "mm2gov-system", "prefix": false, "why": "system"},
		{"text": "kube-", "prefix": true, "why": "Kubernetes"},
	],
}

with_names(t, namespace, secrets) := object.union(t, {"names": {"namespace": namespace, "principal_secrets": secrets}})

repo(tenants) := object.union(fx.repo(tenants), {
	"reserved": reserved_input,
	"clusters": object.union(fx.clusters, {"cloud": object.union(fx.clusters.cloud, {"strimzi_namespace": "kafka-cloud"})}),
})

clean := repo([
	with_names(fx.payments, "payments", [["scram-onprem-payments--app"]]),
	with_names(fx.marketing, "marketing", [["scram-onprem-marketing--app"]]),
])

test_clean_repo_passes if {
	count(reserved.violations) == 0 with input as clean
}

test_without_reserved_input_nothing_fires if {
	count(reserved.violations) == 0 with input as fx.base
}

test_reserved_topic_prefixes_fire if {
	evil := fx.tenant("marketing", {"topic_prefixes": ["mm2gov.", "_", "heart", "onprem.payments."]})
	vs := reserved.violations with input as repo([evil])
	fx.hits(vs, "reserved_name_claimed") == {["marketing", "tenants/marketing.yaml:5"], ["marketing", "tenants/marketing.yaml:6"], ["marketing", "tenants/marketing.yaml:1"]}
	count([v | some v in vs; v.rule == "reserved_name_claimed"]) == 4
	some v in vs
	contains(v.message, "covers the reserved name 'heartbeats'")
}

test_reserved_group_name_fires if {
	evil := fx.tenant("marketing", {"group_prefixes": ["onprem-"]})
	vs := reserved.violations with input as repo([evil])
	fx.hits(vs, "reserved_name_claimed") == {["marketing", "tenants/marketing.yaml:8"]}
}

test_reserved_principals_fire if {
	evil := fx.tenant("marketing", {"principals": [
		{"name": "User:ANONYMOUS", "access": ["read"]},
		{"name": "User:mm2-payments-onprem-to-cloud", "access": ["read"]},
		{"name": "User:anonymous-reader", "access": ["read"]},
	]})
	vs := reserved.violations with input as repo([evil])
	fx.hits(vs, "reserved_principal") == {["marketing", "tenants/marketing.yaml:10"], ["marketing", "tenants/marketing.yaml:12"]}
}

test_dot_underscore_collision_fires_for_both if {
	evil := fx.tenant("marketing", {"topic_prefixes": ["marketing.", "payments_"]})
	vs := reserved.violations with input as repo([fx.payments, evil])
	fx.hits(vs, "prefix_collision") == {["marketing", "tenants/marketing.yaml:6"], ["payments", "tenants/payments.yaml:5"]}
}

test_longer_dot_underscore_collision_fires if {
	evil := fx.tenant("marketing", {"topic_prefixes": ["payments_orders."]})
	vs := reserved.violations with input as repo([fx.payments, evil])
	fx.hits(vs, "prefix_collision") == {["marketing", "tenants/marketing.yaml:5"], ["payments", "tenants/payments.yaml:5"]}
}

test_overlap_as_written_is_left_to_prefix_overlap if {
	same := fx.tenant("marketing", {"topic_prefixes": ["payments.x."]})
	vs := reserved.violations with input as repo([fx.payments, same])
	fx.hits(vs, "prefix_collision") == set()
}

test_derived_name_collisions_name_both_owners if {
	a := with_names(fx.tenant("payments", {"principals": [{"name": "User:Payments-App", "access": ["read"]}]}), "payments", [["s1"]])
	b := with_names(fx.tenant("marketing", {"principals": [{"name": "User:payments-app", "access": ["read"]}]}), "payments", [["s1"]])
	vs := reserved.violations with input as repo([a, b])
	fx.hits(vs, "derived_name_collision") == {
		["payments", "tenants/payments.yaml:10"], ["marketing", "tenants/marketing.yaml:10"],
		["payments", "tenants/payments.yaml:1"], ["marketing", "tenants/marketing.yaml:1"],
	}
	some v in vs
	v.message == "tenant marketing: mm2gov would derive the same namespace payments for it and for tenant payments, so one password, certificate, Secret, namespace, MirrorMaker 2 or Kubernetes object would serve both; rename one of them"
}

test_flow_and_mm2_secret_collisions_fire if {
	f := object.union(fx.payments.flows[0], {"mm2_secrets": ["scram-cloud-x"]})
	a := object.union(fx.payments, {"flows": [f]})
	g := object.union(fx.marketing.flows[0], {"id": "payments-onprem-to-cloud", "mm2_principal": "User:other", "mm2_secrets": ["scram-cloud-x"]})
	b := object.union(fx.marketing, {"flows": [g], "namespace": "mkt"})
	vs := reserved.violations with input as repo([with_names(a, "p", []), with_names(b, "mkt", [])])
	count([v | some v in vs; v.rule == "derived_name_collision"]) == 4
}

test_reserved_and_strimzi_namespaces_fire if {
	a := with_names(fx.payments, "kube-system", [])
	b := with_names(object.union(fx.marketing, {"namespace": "kafka-cloud"}), "kafka-cloud", [])
	vs := reserved.violations with input as repo([a, b])
	fx.hits(vs, "namespace_reserved") == {["payments", "tenants/payments.yaml:1"], ["marketing", "tenants/marketing.yaml:1"]}
}

# Case, blanks and look-alikes: the canonical forms governance/model/names.py sends (names.canonical).
canonical_users := [
	{"text": "admin", "canonical": "admin", "prefix": false, "why": "the super user"},
	{"text": "mm2-", "canonical": "mm2-", "prefix": true, "why": "MM2 principals"},
	{"text": "mm2gov", "canonical": "mm2gov", "prefix": true, "why": "mm2gov's own principals"},
]

test_reserved_principals_fire_in_every_form_an_authority_takes_for_them if {
	evil := fx.tenant("marketing", {"principals": [
		{"name": "User:Admin", "canonical": "user:admin", "access": ["read"]},
		{"name": "User:MM2-payments-onprem-to-cloud", "canonical": "user:mm2-payments-onprem-to-cloud", "access": ["read"]},
		{"name": "User:MM2GOV-Probe-payments", "canonical": "user:mm2gov-probe-payments", "access": ["read"]},
		{"name": "User:admin\u200b", "canonical": "user:admin", "access": ["read"]},
		{"name": "User:marketing-app", "canonical": "user:marketing-app", "access": ["read"]},
	]})
	vs := reserved.violations with input as object.union(repo([evil]), {"reserved": {"user": canonical_users}})
	hit := {p | some v in vs; v.rule == "reserved_principal"; some p in evil.principals; contains(v.message, sprintf("principal %s is reserved", [p.name]))}
	{p.name | some p in hit} == {"User:Admin", "User:MM2-payments-onprem-to-cloud", "User:MM2GOV-Probe-payments", "User:admin\u200b"}
	count([v | some v in vs; v.rule == "reserved_principal"]) == 4
}

test_principals_equal_in_canonical_form_collide if {
	a := with_names(fx.tenant("payments", {"principals": [{"name": "User:app", "canonical": "user:app", "access": ["read"]}]}), "payments", [["s1"]])
	b := with_names(fx.tenant("marketing", {"principals": [{"name": "User:app\u200b", "canonical": "user:app", "access": ["read"]}]}), "marketing", [["s2"]])
	vs := reserved.violations with input as repo([a, b])
	fx.hits(vs, "derived_name_collision") == {["payments", "tenants/payments.yaml:10"], ["marketing", "tenants/marketing.yaml:10"]}
}

# Two tenants' remote topics whose names fold to one KafkaTopic object name (names.kafka_topic_object hashes
# every name that is not a Kubernetes name, so this takes two exact names, or a hash collision): one object
# would stand for both topics and one of them would be dropped.
kafka_topic(t, n) := {"kind": "KafkaTopic", "namespace": "kafka-cloud", "name": n, "owner": sprintf("topic %s", [t]), "what": sprintf("the KafkaTopic of its remote topic %s", [t])}

test_kafka_topic_object_collisions_name_both_owners if {
	f := object.union(fx.payments.flows[0], {"k8s_objects": [kafka_topic("onprem.payments.a", "same")]})
	g := object.union(fx.marketing.flows[0], {"k8s_objects": [kafka_topic("onprem.marketing.a", "same")]})
	a := with_names(object.union(fx.payments, {"flows": [f]}), "payments", [])
	b := with_names(object.union(fx.marketing, {"flows": [g]}), "marketing", [])
	vs := reserved.violations with input as repo([a, b])
	fx.hits(vs, "derived_name_collision") == {["payments", "tenants/payments.yaml:14"], ["marketing", "tenants/marketing.yaml:14"]}
	some v in vs
	v.tenant == "payments"
	v.message == "tenant payments's flow onprem -> cloud (the KafkaTopic of its remote topic onprem.payments.a): mm2gov would derive the same KafkaTopic kafka-cloud/same for it and for tenant marketing's flow cloud -> onprem (the KafkaTopic of its remote topic onprem.marketing.a), so one password, certificate, Secret, namespace, MirrorMaker 2 or Kubernetes object would serve both; rename one of them"
}

# One topic declared by two flows of one tenant is one owner: no collision.
test_one_topic_twice_is_one_owner if {
	t := {"kind": "KafkaTopic", "namespace": "kafka-cloud", "name": "x", "owner": "topic x", "what": "the KafkaTopic of its remote topic x"}
	f := object.union(fx.payments.flows[0], {"k8s_objects": [t, t]})
	a := with_names(object.union(fx.payments, {"flows": [f, f]}), "payments", [])
	vs := reserved.violations with input as repo([a])
	fx.hits(vs, "derived_name_collision") == set()
}
