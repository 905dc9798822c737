package mm2gov.admission.rules.users_test

import data.mm2gov.admission
import data.mm2gov.admission.lib_test as t
import data.mm2gov.lib.input_test as fx

acl(type, name, pattern, ops) := {"resource": {"type": type, "name": name, "patternType": pattern}, "operations": ops, "host": "*"}

topic(name, ops) := acl("topic", name, "prefix", ops)

group(name, ops) := acl("group", name, "prefix", ops)

cluster_describe := {"resource": {"type": "cluster"}, "operations": ["Describe"], "host": "*"}

user_object(name, acls) := {
	"apiVersion": "kafka.strimzi.io/v1",
	"kind": "KafkaUser",
	"metadata": {"name": name, "namespace": "kafka-cloud", "labels": {"strimzi.io/cluster": "cloud"}},
	"spec": {
		"authentication": {"type": "scram-sha-512"},
		"authorization": {"type": "simple", "acls": acls},
	},
}

user(tenant, name, acls) := t.request("KafkaUser", name, tenant, user_object(name, acls))

payments_app(acls) := t.decide(user("payments", "payments-app", acls))

marketing_app(acls) := t.decide(user("marketing", "marketing-app", acls))

mm2(acls) := t.decide(user("payments", "mm2-payments-onprem-to-cloud", acls))

# ---- principals ---------------------------------------------------------------

test_principal_as_acls_py_pass if {
	d := payments_app([
		topic("payments.", ["Read", "Write", "Describe"]),
		acl("topic", "payments.orders", "literal", ["Read"]),
		group("payments-", ["Read"]),
		topic("onprem.payments.", ["Read", "Describe"]),
	])
	d == {"allowed": true, "violations": []}
}

test_user_without_acls_pass if {
	t.decide(t.request("KafkaUser", "payments-app", "payments", {"spec": {"authentication": {"type": "tls"}}})).allowed
}

test_legacy_single_operation_pass if {
	t.decide(user("payments", "payments-app", [{"resource": {"type": "topic", "name": "payments.", "patternType": "prefix"}, "operation": "Read"}])).allowed
}

test_wildcard_topic_fires if {
	d := payments_app([topic("*", ["Read"])])
	t.rules(d) == {"admission_user_acl_wildcard"}
	t.hits(d, "admission_user_acl_wildcard") == {"spec/authorization/acls/0/resource/name"}
	d.violations[0].severity == "critical"
	t.message(d, "admission_user_acl_wildcard") == "KafkaUser payments-app: ACL 0 allows Read on topic name '*', which covers every topic of the cluster; name a topic inside tenant payments's names (mm2gov.payments-onprem-to-cloud., onprem.payments., payments.)"
}

test_empty_or_missing_names_are_wildcards if {
	d := payments_app([group("", ["Read"]), {"resource": {"type": "topic"}, "operations": ["Read"]}, acl("topic", 5, "literal", ["Read"])])
	t.hits(d, "admission_user_acl_wildcard") == {"spec/authorization/acls/0/resource/name", "spec/authorization/acls/1/resource/name", "spec/authorization/acls/2/resource/name"}
	t.rules(d) == {"admission_user_acl_wildcard"}
}

test_wildcard_transactional_id_fires if {
	d := payments_app([acl("transactionalId", "*", "literal", ["Write"])])
	t.rules(d) == {"admission_user_acl_wildcard", "admission_user_acl_operation"}
	contains(t.message(d, "admission_user_acl_wildcard"), "(mm2gov grants none of this type)")
}

test_prefix_without_separator_fires if {
	d := payments_app([topic("payments", ["Read"])])
	t.rules(d) == {"admission_user_acl_outside_scope"}
	t.message(d, "admission_user_acl_outside_scope") == "KafkaUser payments-app: ACL 0 allows Read on topic prefix 'payments', which is outside tenant payments's topic names (mm2gov.payments-onprem-to-cloud., onprem.payments., payments.); use a name that starts with one of those prefixes, separator included"
}

test_other_tenants_names_fire if {
	d := payments_app([topic("marketing.", ["Read"]), group("marketing-", ["Read"])])
	t.rules(d) == {"admission_user_acl_outside_scope"}
	t.hits(d, "admission_user_acl_outside_scope") == {"spec/authorization/acls/0/resource/name", "spec/authorization/acls/1/resource/name"}
	some v in d.violations
	v.location == "spec/authorization/acls/1/resource/name"
	contains(v.message, "outside tenant payments's group names (mm2gov.payments-onprem-to-cloud., payments-)")
}

test_deny_acls_pass if {
	payments_app([{"type": "deny", "resource": {"type": "topic", "name": "*"}, "operations": ["All"]}]).allowed
}

test_operations_beyond_access_fire if {
	d := payments_app([topic("payments.", ["Read", "Alter", "Delete"])])
	t.rules(d) == {"admission_user_acl_operation"}
	t.hits(d, "admission_user_acl_operation") == {"spec/authorization/acls/0/operations"}
	t.message(d, "admission_user_acl_operation") == "KafkaUser payments-app: ACL 0 allows Alter, Delete on topic prefix 'payments.', beyond what principal User:payments-app (access read, write) may do there (Describe, Read, Write); remove Alter, Delete"
}

test_writing_remote_topics_fires if {
	d := payments_app([topic("onprem.payments.", ["Write"])])
	t.rules(d) == {"admission_user_acl_operation"}
}

test_read_only_principal_cannot_write if {
	d := marketing_app([topic("marketing.", ["Write"])])
	t.rules(d) == {"admission_user_acl_operation"}
	contains(t.message(d, "admission_user_acl_operation"), "principal User:marketing-app (access read) may do there (Describe, Read)")
}

test_write_only_principal_cannot_read_groups if {
	writer := object.union(t.repo, {"tenants": {"payments": {"principals": [{"name": "User:payments-app", "access": ["write"]}]}}})
	d := t.decide_in(user("payments", "payments-app", [group("payments-", ["Read"]), topic("payments.", ["Write"])]), writer)
	t.rules(d) == {"admission_user_acl_operation"}
	every v in d.violations {
		contains(v.message, "(nothing: mm2gov grants it no such ACL)")
	}
}

test_cluster_acl_for_principal_fires if {
	d := payments_app([cluster_describe])
	t.rules(d) == {"admission_user_acl_operation"}
	contains(t.message(d, "admission_user_acl_operation"), "allows Describe on the cluster, beyond what principal User:payments-app")
}

test_granted_topics_pass if {
	d := marketing_app([topic("payments.public.", ["Read", "Describe"]), topic("onprem.payments.public.", ["Read"])])
	d.allowed
}

test_granted_topics_are_read_only if {
	d := marketing_app([topic("payments.public.", ["Write"]), topic("payments.secret.", ["Read"])])
	t.hits(d, "admission_user_acl_operation") == {"spec/authorization/acls/0/operations"}
	t.hits(d, "admission_user_acl_outside_scope") == {"spec/authorization/acls/1/resource/name"}
	some v in d.violations
	v.rule == "admission_user_acl_operation"
	contains(v.message, "may do there (Describe, Read)")
}

test_unknown_user_fires if {
	d := t.decide(user("payments", "someone", [topic("payments.", ["Read"]), topic("marketing.", ["Read"])]))
	t.rules(d) == {"admission_user_unknown", "admission_user_acl_outside_scope"}
	t.hits(d, "admission_user_unknown") == {"metadata/name"}
	t.message(d, "admission_user_unknown") == "KafkaUser someone is neither a principal of tenant payments (payments-app) nor the MirrorMaker 2 user of one of its flows (mm2-payments-onprem-to-cloud); name the KafkaUser after one of them, or add User:someone to tenants/payments.yaml principals first"
}

test_unknown_user_of_tenant_without_users if {
	empty := object.union(t.repo, {"tenants": {"payments": {"principals": [], "flows": []}}})
	d := t.decide_in(user("payments", "someone", []), empty)
	contains(t.message(d, "admission_user_unknown"), "(none) nor the MirrorMaker 2 user of one of its flows (none)")
}

# ---- MirrorMaker 2 users ---------------------------------------------------------

test_mm2_user_as_acls_py_pass if {
	internal := "mm2gov.payments-onprem-to-cloud."
	d := mm2([
		topic("payments.", ["Read", "Describe", "DescribeConfigs"]),
		group("payments-", ["Describe"]),
		topic("onprem.payments.", ["Create", "Write", "Alter", "AlterConfigs", "Describe", "DescribeConfigs"]),
		topic(internal, ["Create", "Read", "Write", "Describe", "DescribeConfigs"]),
		group(internal, ["Read", "Describe"]),
	])
	d == {"allowed": true, "violations": []}
}

# DESCRIBE on the cluster lists every tenant's ACLs and SCRAM users (FIELD.md 12).
test_mm2_user_cluster_describe_fires if {
	d := mm2([cluster_describe])
	t.rules(d) == {"admission_user_acl_operation"}
	contains(t.message(d, "admission_user_acl_operation"), "allows Describe on the cluster")
}

test_mm2_user_beyond_fires if {
	d := mm2([
		topic("mm2gov.payments-onprem-to-cloud.", ["Delete"]),
		topic("payments.", ["Write"]),
		{"resource": {"type": "cluster"}, "operations": ["All"]},
	])
	t.rules(d) == {"admission_user_acl_operation"}
	t.hits(d, "admission_user_acl_operation") == {"spec/authorization/acls/0/operations", "spec/authorization/acls/1/operations", "spec/authorization/acls/2/operations"}
	some v in d.violations
	v.location == "spec/authorization/acls/0/operations"
	v.message == "KafkaUser mm2-payments-onprem-to-cloud: ACL 0 allows Delete on topic prefix 'mm2gov.payments-onprem-to-cloud.', beyond what the MirrorMaker 2 user of flow payments-onprem-to-cloud may do there (Create, Describe, DescribeConfigs, Read, Write); remove Delete"
}

test_other_flows_internal_prefix_fires if {
	d := mm2([topic("mm2gov.marketing-cloud-to-onprem.", ["Read"])])
	t.rules(d) == {"admission_user_acl_outside_scope"}
}

# ---- transactional ids: an exactly_once flow's MirrorMaker 2 only ---------------------

eos_mm2(acls) := t.decide_in(user("payments", "mm2-payments-onprem-to-cloud", acls), fx.exactly_once_base)

tasks := "mm2gov.payments-onprem-to-cloud.connect-"

leader := "connect-cluster-mm2gov.payments-onprem-to-cloud.connect"

txn(name, pattern, ops) := acl("transactionalId", name, pattern, ops)

# acls.py mm2_scope of an exactly_once flow: Write and Describe on its tasks'
# prefix and on its leader's literal id.
test_exactly_once_mm2_user_own_transactional_ids_pass if {
	d := eos_mm2([
		txn(tasks, "prefix", ["Write", "Describe"]),
		txn(leader, "literal", ["Write", "Describe"]),
		txn(concat("", [tasks, "MirrorSourceConnector-0"]), "literal", ["Write"]),
	])
	d == {"allowed": true, "violations": []}
}

test_at_least_once_mm2_user_transactional_ids_fire if {
	d := mm2([txn(tasks, "prefix", ["Write"]), txn(leader, "literal", ["Write"])])
	t.rules(d) == {"admission_user_acl_operation"}
	t.hits(d, "admission_user_acl_operation") == {"spec/authorization/acls/0/operations", "spec/authorization/acls/1/operations"}
	every v in d.violations {
		contains(v.message, "(nothing: mm2gov grants it no such ACL)")
	}
}

test_other_transactional_ids_fire if {
	d := eos_mm2([
		txn("connect-cluster-", "prefix", ["Write"]),
		txn(leader, "prefix", ["Write"]),
		txn("mm2gov.marketing-cloud-to-onprem.connect-", "prefix", ["Write"]),
		txn("connect-cluster-mm2gov.marketing-cloud-to-onprem.connect", "literal", ["Write"]),
		txn("mm2gov.payments-onprem-to-cloud.", "prefix", ["Write"]),
		txn(tasks, "prefix", ["Alter"]),
	])
	t.rules(d) == {"admission_user_acl_operation"}
	count(t.hits(d, "admission_user_acl_operation")) == 6
}

test_wildcard_transactional_id_of_exactly_once_mm2_fires if {
	d := eos_mm2([txn("*", "literal", ["Write"])])
	t.rules(d) == {"admission_user_acl_wildcard", "admission_user_acl_operation"}
}

test_exactly_once_flow_gives_its_tenants_principals_no_transactional_id if {
	d := t.decide_in(user("payments", "payments-app", [txn(tasks, "prefix", ["Write"])]), fx.exactly_once_base)
	t.rules(d) == {"admission_user_acl_operation"}
}

# ---- shape --------------------------------------------------------------------------

test_malformed_acls_fire if {
	d := payments_app("all of them")
	t.hits(d, "admission_object_malformed") == {"spec/authorization/acls"}
	d2 := payments_app([topic("payments.", ["Read"]), {"resource": "topic"}, 7])
	t.hits(d2, "admission_object_malformed") == {"spec/authorization/acls/1", "spec/authorization/acls/2"}
	d3 := t.decide(t.request("KafkaUser", "payments-app", "payments", {"spec": {"authorization": "superuser"}}))
	t.hits(d3, "admission_object_malformed") == {"spec/authorization"}
}

# ---- the password Secret ---------------------------------------------------------

password(secret) := {"type": "scram-sha-512", "password": {"valueFrom": {"secretKeyRef": {"name": secret, "key": "password"}}}}

with_password(tenant, name, secret) := t.decide(t.request("KafkaUser", name, tenant, object.union(
	user_object(name, [topic("payments.", ["Read"])]),
	{"spec": {"authentication": password(secret)}},
)))

test_own_password_secret_pass if {
	with_password("payments", "payments-app", "scram-cloud-payments-app").allowed
	mm2_user := t.decide(t.request("KafkaUser", "mm2-payments-onprem-to-cloud", "payments", object.union(
		user_object("mm2-payments-onprem-to-cloud", []),
		{"spec": {"authentication": password("scram-onprem-mm2-payments-onprem-to-cloud")}},
	)))
	mm2_user.allowed
}

test_password_of_another_user_fires if {
	every secret in ["scram-cloud-payments-analytics", "scram-cloud-marketing-app", "cluster-admin", "scram-cloud-mm2-payments-onprem-to-cloud"] {
		d := with_password("payments", "payments-app", secret)
		"admission_user_secret" in t.rules(d)
		t.hits(d, "admission_user_secret") == {"spec/authentication/password/valueFrom/secretKeyRef/name"}
	}
	d := with_password("payments", "payments-app", "scram-cloud-marketing-app")
	t.message(d, "admission_user_secret") == "KafkaUser payments-app: spec/authentication/password/valueFrom/secretKeyRef/name names secret 'scram-cloud-marketing-app', which is not one of user payments-app's own credential Secrets (scram-cloud-payments-app, scram-dr-payments-app, scram-onprem-payments-app, tls-cloud-payments-app, tls-dr-payments-app, tls-onprem-payments-app); take the password from the user's own Secret"
	d.violations[0].severity == "critical"
}

test_unknown_user_has_no_secrets if {
	d := with_password("payments", "payments-batch", "scram-cloud-payments-batch")
	t.rules(d) == {"admission_user_unknown", "admission_user_secret"}
	contains(t.message(d, "admission_user_secret"), "own credential Secrets (none)")
}

# ---- the tenant's probe (acls.py probe_scope) -----------------------------------

probe_facts := {"topic": "payments.mm2gov-probe", "topic_item": "payments\\.mm2gov\\-probe", "remote_topic": "onprem.payments.mm2gov-probe"}

probe_repo := object.union(t.repo, {"tenants": {"payments": object.union(t.repo.tenants.payments, {
	"flows": [object.union(f, {"probe": probe_facts}) | some f in t.repo.tenants.payments.flows],
	"names": object.union(t.repo.tenants.payments.names, {"probe": {
		"user": "mm2gov-probe-payments", "principal": "User:mm2gov-probe-payments",
		"secrets": ["scram-cloud-mm2gov-probe-payments", "scram-onprem-mm2gov-probe-payments"],
	}}),
})}})

probe_decision(acls, repo) := d if {
	d := admission.decision with input as user("payments", "mm2gov-probe-payments", acls) with data.mm2gov_repo as repo
}

probe_user(acls) := probe_decision(acls, probe_repo)

probe_as_acls_py := [
	acl("topic", "payments.mm2gov-probe", "literal", ["Create", "Write", "Describe"]),
	acl("topic", "onprem.payments.mm2gov-probe", "literal", ["Read", "Describe"]),
]

test_probe_as_acls_py_pass if {
	probe_user(probe_as_acls_py) == {"allowed": true, "violations": []}
}

test_probe_without_an_slo_flow_is_unknown if {
	d := probe_decision(probe_as_acls_py, t.repo)
	t.rules(d) == {"admission_user_unknown"}
}

test_probe_prefix_acl_fires if {
	d := probe_user([acl("topic", "payments.mm2gov-probe", "prefix", ["Write"])])
	t.rules(d) == {"admission_user_acl_operation"}
	t.message(d, "admission_user_acl_operation") == "KafkaUser mm2gov-probe-payments: ACL 0 allows Write on topic prefix 'payments.mm2gov-probe', beyond what the probe user of tenant payments may do there (nothing: mm2gov grants it no such ACL); remove Write"
}

test_probe_reads_no_other_topic_and_no_group if {
	d := probe_user([
		acl("topic", "payments.orders", "literal", ["Read"]),
		acl("topic", "payments.mm2gov-probe", "literal", ["Read"]),
		acl("topic", "onprem.payments.mm2gov-probe", "literal", ["Write"]),
		group("payments-", ["Read"]),
		acl("topic", "marketing.mm2gov-probe", "literal", ["Write"]),
	])
	t.rules(d) == {"admission_user_acl_operation", "admission_user_acl_outside_scope"}
	t.hits(d, "admission_user_acl_operation") == {
		"spec/authorization/acls/0/operations", "spec/authorization/acls/1/operations",
		"spec/authorization/acls/2/operations", "spec/authorization/acls/3/operations",
	}
	t.hits(d, "admission_user_acl_outside_scope") == {"spec/authorization/acls/4/resource/name"}
}

probe_with_password(secret) := d if {
	obj := json.patch(user_object("mm2gov-probe-payments", probe_as_acls_py), [{"op": "add", "path": "/spec/authentication/password", "value": {"valueFrom": {"secretKeyRef": {"name": secret, "key": "password"}}}}])
	d := admission.decision with input as t.request("KafkaUser", "mm2gov-probe-payments", "payments", obj) with data.mm2gov_repo as probe_repo
}

test_probe_takes_its_own_password_only if {
	probe_with_password("scram-cloud-mm2gov-probe-payments").allowed
	t.rules(probe_with_password("scram-cloud-mm2-payments-onprem-to-cloud")) == {"admission_user_secret"}
}

# ---- client quotas ---------------------------------------------------------------

# The repo with payments' flow onprem -> cloud sized (input.py's `sizing`): a fetch quota of 300 on each
# onprem broker and a produce quota of 100 on each cloud broker.
sized_repo := json.patch(fx.base, [{"op": "add", "path": "/tenants/payments/flows/0/sizing", "value": {
	"tasks": 2, "nodes": 1, "catch_up_bytes_per_second": 300,
	"source_fetch_byte_rate": 300, "target_produce_byte_rate": 100,
}}])

mm2_acls := [
	topic("payments.", ["Read", "Describe", "DescribeConfigs"]),
	topic("onprem.payments.", ["Create", "Read", "Write", "Describe"]),
]

mm2_with_quotas(quotas, labels) := t.decide_in(
	t.request("KafkaUser", "mm2-payments-onprem-to-cloud", "payments", json.patch(
		user_object("mm2-payments-onprem-to-cloud", mm2_acls),
		[{"op": "add", "path": "/spec/quotas", "value": quotas}, {"op": "replace", "path": "/metadata/labels", "value": labels}],
	)),
	sized_repo,
)

on_cloud := {"strimzi.io/cluster": "cloud"}

test_mm2_user_with_its_produce_quota_on_the_target_pass if {
	mm2_with_quotas({"producerByteRate": 100}, on_cloud) == {"allowed": true, "violations": []}
	mm2_with_quotas({"producerByteRate": 50}, on_cloud).allowed
}

test_mm2_user_without_its_quota_fires if {
	d := mm2_with_quotas({}, on_cloud)
	t.rules(d) == {"admission_user_quota"}
	t.hits(d, "admission_user_quota") == {"spec/quotas/producerByteRate"}
	t.message(d, "admission_user_quota") == "KafkaUser mm2-payments-onprem-to-cloud is the MirrorMaker 2 user of flow payments-onprem-to-cloud, whose capacity holds it to producerByteRate 100 on this cluster (docs/capacity.md); spec.quotas.producerByteRate is missing: set it to 100 or less"
}

test_mm2_user_above_its_quota_or_with_a_non_number_fires if {
	some quotas in [{"producerByteRate": 101}, {"producerByteRate": "100"}, {"producerByteRate": -1}, {"producerByteRate": null}]
	t.rules(mm2_with_quotas(quotas, on_cloud)) == {"admission_user_quota"}
}

test_quotas_that_are_not_an_object_fire if {
	t.rules(mm2_with_quotas("100", on_cloud)) == {"admission_user_quota"}
}

test_mm2_user_on_an_unknown_cluster_is_held_to_both_quotas if {
	d := mm2_with_quotas({"producerByteRate": 100}, {"strimzi.io/cluster": "somewhere"})
	t.hits(d, "admission_user_quota") == {"spec/quotas/consumerByteRate"}
	mm2_with_quotas({"producerByteRate": 100, "consumerByteRate": 300}, {"strimzi.io/cluster": "somewhere"}).allowed
}

# payments-app with a quota of its own, as a KafkaUser with `quotas` on the cluster `labels` name.
principal_quota_repo := json.patch(fx.base, [{"op": "add", "path": "/tenants/payments/principals/0/quota", "value": {"producer_byte_rate": 1000, "consumer_byte_rate": null, "request_percentage": 50}}])

app_with_quotas(quotas, labels) := t.decide_in(
	t.request("KafkaUser", "payments-app", "payments", json.patch(
		user_object("payments-app", [topic("payments.", ["Read", "Write", "Describe"])]),
		[{"op": "add", "path": "/spec/quotas", "value": quotas}, {"op": "replace", "path": "/metadata/labels", "value": labels}],
	)),
	principal_quota_repo,
)

test_a_principal_with_a_quota_carries_each_key_on_every_cluster if {
	app_with_quotas({"producerByteRate": 1000, "requestPercentage": 50}, on_cloud).allowed
	app_with_quotas({"producerByteRate": 1000, "requestPercentage": 50}, {"strimzi.io/cluster": "onprem"}).allowed
	d := app_with_quotas({"producerByteRate": 1000}, on_cloud)
	t.hits(d, "admission_user_quota") == {"spec/quotas/requestPercentage"}
	t.message(d, "admission_user_quota") == "KafkaUser payments-app is principal User:payments-app, whose quota in its tenant's file holds it to requestPercentage 50 on this cluster (docs/capacity.md); spec.quotas.requestPercentage is missing: set it to 50 or less"
}

test_flow_without_capacity_needs_no_quota if {
	d := t.decide(t.request("KafkaUser", "mm2-payments-onprem-to-cloud", "payments", user_object("mm2-payments-onprem-to-cloud", mm2_acls)))
	not "admission_user_quota" in t.rules(d)
}
