# Tests of mm2gov.lib.input, and the small repos every other test builds on:
# `base` is a clean two-tenant repo (no violation); tests change one thing.
package mm2gov.lib.input_test

import data.mm2gov.lib.input as lib

# ---- fixtures -------------------------------------------------------------

security(protocol, mechanism, tls) := {
	"protocol": protocol,
	"sasl_mechanism": mechanism,
	"tls_min_version": tls,
	"ca_secret": "cluster-ca",
	"admin_credentials_secret": "cluster-admin",
}

cluster(name, zone, sec) := {"name": name, "bootstrap_servers": sprintf("%s:9093", [name]), "zone": zone, "security": sec}

clusters := {
	"onprem": cluster("onprem", "onprem", security("SASL_SSL", "SCRAM-SHA-512", "TLSv1.2")),
	"cloud": cluster("cloud", "cloud", security("SASL_SSL", "SCRAM-SHA-512", "TLSv1.3")),
	"dr": cluster("dr", "onprem", security("SSL", null, "TLSv1.2")),
}

# Facts Python gives for a regex with one alternative.
pattern(regex, literal) := {
	"regex": regex,
	"case_insensitive": false,
	"alternatives": [{"literal_prefix": literal, "exact": false}],
}

flow(id, source, target, policy, topics, groups) := {
	"id": id,
	"source": source,
	"target": target,
	"replication_policy": policy,
	"delivery": "at_least_once",
	"remote_prefix": remote_prefix(policy, source),
	"mm2_user": sprintf("mm2-%s", [id]),
	"mm2_principal": sprintf("User:mm2-%s", [id]),
	"internal_prefix": sprintf("mm2gov.%s.", [id]),
	"mm2_topics": {
		"offset_syncs": sprintf("mm2gov.%s.offset-syncs", [id]),
		"checkpoints": sprintf("mm2gov.%s.checkpoints", [id]),
		"heartbeats": sprintf("mm2gov.%s.heartbeats", [id]),
	},
	"replication_policy_class": policy_class[policy],
	"mm2_policy_config": {
		"mm2gov.flow.id": id,
		"mm2gov.flow.offset-syncs.topic": sprintf("mm2gov.%s.offset-syncs", [id]),
		"mm2gov.flow.checkpoints.topic": sprintf("mm2gov.%s.checkpoints", [id]),
		"mm2gov.flow.heartbeats.topic": sprintf("mm2gov.%s.heartbeats", [id]),
	},
	"transactional_ids": {
		"tasks": sprintf("mm2gov.%s.connect-", [id]),
		"leader": sprintf("connect-cluster-mm2gov.%s.connect", [id]),
	},
	"topics": [p.regex | some p in topics],
	"groups": [p.regex | some p in groups],
	"topic_patterns": topics,
	"group_patterns": groups,
}

# Test data only: mm2gov computes these names in governance/model/names.py.
policy_class := {
	"default": "io.mm2gov.replication.FlowReplicationPolicy",
	"identity": "io.mm2gov.replication.FlowIdentityReplicationPolicy",
}

remote_prefix("identity", _) := ""

remote_prefix(policy, source) := sprintf("%s.", [source]) if policy != "identity"

tenant(name, overrides) := object.union(
	{
		"name": name,
		"owners": [sprintf("%s-team@example.com", [name])],
		"classification": "internal",
		"topic_prefixes": [sprintf("%s.", [name])],
		"group_prefixes": [sprintf("%s-", [name])],
		"principals": [{"name": sprintf("User:%s-app", [name]), "access": ["read", "write"]}],
		"record_marker": null,
		"flows": [],
		"grants": [],
		"names": {"namespace": name},
	},
	overrides,
)

payments := tenant("payments", {
	"classification": "confidential",
	"flows": [flow(
		"payments-onprem-to-cloud", "onprem", "cloud", "default",
		[pattern("payments\\.orders.*", "payments.orders")],
		[pattern("payments-.*", "payments-")],
	)],
	"grants": [{"to": "marketing", "topics": ["payments.public."], "access": ["read"]}],
})

# payments with its flow on delivery exactly_once, and marketing as in base.
exactly_once_base := repo([
	object.union(payments, {"flows": [object.union(payments.flows[0], {"delivery": "exactly_once"})]}),
	marketing,
])

marketing := tenant("marketing", {
	"principals": [{"name": "User:marketing-app", "access": ["read"]}],
	"flows": [flow(
		"marketing-cloud-to-onprem", "cloud", "onprem", "identity",
		[pattern("marketing\\..*", "marketing.")],
		[],
	)],
})

# Lines of the nodes the rules point at, for every tenant the tests use.
tenant_lines := {
	"": 1,
	"/classification": 3,
	"/topic_prefixes/0": 5,
	"/topic_prefixes/1": 6,
	"/group_prefixes/0": 8,
	"/principals/0/name": 10,
	"/principals/1/name": 12,
	"/flows/0": 14,
	"/flows/0/source": 15,
	"/flows/0/target": 16,
	"/flows/0/topics/0": 17,
	"/flows/0/topics/1": 18,
	"/flows/0/groups/0": 19,
	"/flows/0/replication_policy": 20,
	"/flows/1": 21,
	"/flows/1/target": 23,
	"/flows/1/replication_policy": 27,
	"/grants/0/to": 30,
	"/grants/0/topics/0": 31,
	"/grants/0/topics/1": 32,
	"/grants/0/access/0": 33,
	"/grants/0/access/1": 34,
}

locations := object.union(
	{sprintf("tenants/%s%s", [name, suffix]): sprintf("tenants/%s.yaml:%d", [name, line]) |
		some name in ["payments", "marketing", "risk", "onprem"]
		some suffix, line in tenant_lines
	},
	{
		"clusters/onprem": "clusters.yaml:2",
		"clusters/onprem/security/protocol": "clusters.yaml:6",
		"clusters/onprem/security/sasl_mechanism": "clusters.yaml:7",
		"clusters/cloud": "clusters.yaml:10",
		"clusters/cloud/security/protocol": "clusters.yaml:14",
		"clusters/cloud/security/sasl_mechanism": "clusters.yaml:15",
	},
)

repo(tenants) := {
	"clusters": clusters,
	"tenants": {t.name: t | some t in tenants},
	"locations": locations,
}

base := repo([payments, marketing])

# {[tenant, location], ...} of the violations of `rule` among `violations`.
hits(violations, rule) := {[v.tenant, v.location] | some v in violations; v.rule == rule}

# ---- location -------------------------------------------------------------

test_location_exact if {
	lib.location("tenants/payments/flows/0/topics/0") == "tenants/payments.yaml:17" with input as base
}

test_location_falls_back_to_nearest_ancestor if {
	lib.location("tenants/payments/flows/0/groups/7") == "tenants/payments.yaml:14" with input as base
	lib.location("tenants/payments/owners/0") == "tenants/payments.yaml:1" with input as base
}

test_location_unknown_is_the_path if {
	lib.location("nowhere/at/all") == "nowhere/at/all" with input as base
	lib.location("tenants/payments") == "tenants/payments" with input as {"tenants": {}, "locations": {}}
	lib.location("tenants/payments/flows/0") == "tenants/payments/flows/0" with input as {"tenants": {}}
}

# ---- violation, names for messages ---------------------------------------

test_violation_shape if {
	lib.violation("r", "high", "payments", "m", "f:1") == {
		"rule": "r", "severity": "high", "tenant": "payments", "message": "m", "location": "f:1",
	}
}

test_flow_id if {
	lib.flow_id({"id": "a-to-b", "source": "a", "target": "b"}) == "a-to-b"
	lib.flow_id({"source": "a", "target": "b"}) == "a-to-b"
}

test_message_helpers if {
	lib.list_text(["payments.", "pay-"]) == "[payments., pay-]"
	lib.anchored_example("payments.") == `payments\..*`
}

# ---- remote-topic prefixes -----------------------------------------------

test_remote_prefixes_default_policy if {
	lib.remote_topic_prefixes(payments, payments.flows[0]) == ["onprem.payments."]
}

test_remote_prefixes_identity_policy if {
	lib.remote_topic_prefixes(marketing, marketing.flows[0]) == ["marketing."]
}

test_flow_remote_prefixes_per_tenant_and_flow if {
	remotes := lib.flow_remote_prefixes with input as base
	remotes == {"payments": [["onprem.payments."]], "marketing": [["marketing."]]}
}

# ---- indexes --------------------------------------------------------------

test_prefix_entries_and_owners if {
	shared := repo([payments, tenant("risk", {"topic_prefixes": ["risk.", "payments."]})])
	lib.topic_prefix_entries == {["payments.", "payments"], ["risk.", "risk"], ["payments.", "risk"]} with input as shared
	lib.group_prefix_entries == {["payments-", "payments"], ["risk-", "risk"]} with input as shared
	lib.topic_prefix_owners["payments."] == {["payments", 0], ["risk", 1]} with input as shared
	lib.group_prefix_owners["risk-"] == {["risk", 0]} with input as shared
}

test_principal_tenants if {
	shared := repo([payments, tenant("risk", {"principals": [{"name": "User:payments-app", "access": ["read"]}]})])
	lib.principal_tenants["User:payments-app"] == {"payments", "risk"} with input as shared
}

# ---- overlap candidates ---------------------------------------------------

test_shorter_sides_finds_prefix_and_equal if {
	lib.shorter_sides({["pay.", "a"], ["pay.x.", "b"], ["risk.", "c"]}) == {"pay."}
	lib.shorter_sides({["pay.", "a"], ["pay.", "b"]}) == {"pay."}
	lib.shorter_sides({["a.", "a"], ["a.b.", "b"], ["a.c.", "c"]}) == {"a."}
}

test_shorter_sides_none_when_apart if {
	lib.shorter_sides({["t1.", "t1"], ["t10.", "t10"], ["dc1.t1.", "t1"]}) == set()
	lib.shorter_sides(set()) == set()
	lib.shorter_sides({["pay.", "a"]}) == set()
}

test_shared_texts if {
	lib.shared_texts({["User:a", "x"], ["User:a", "y"], ["User:ab", "z"]}) == {"User:a"}
	lib.shared_texts({["User:a", "x"], ["User:ab", "z"]}) == set()
}

test_leading_candidates if {
	lib.leading_candidates("onprem.payments.", {"onprem.", "pay.", "onprem.payments."}, {7, 4, 16}) == {"onprem.", "onprem.payments."}
	lib.leading_candidates("pay.", {"payments."}, {9}) == set()
}

# ---- grants ---------------------------------------------------------------

test_grant_valid if {
	lib.grant_valid(payments, payments.grants[0]) with input as base
}

test_grant_invalid if {
	not lib.grant_valid(payments, {"to": "nobody", "topics": ["payments.public."], "access": ["read"]}) with input as base
	not lib.grant_valid(payments, {"to": "marketing", "topics": ["payments.public."], "access": ["read", "write"]}) with input as base
	not lib.grant_valid(payments, {"to": "marketing", "topics": ["marketing."], "access": ["read"]}) with input as base
	not lib.grant_valid(payments, {"to": "marketing", "topics": ["*"], "access": ["read"]}) with input as base
}

test_wildcard_grant_topics if {
	lib.wildcard_grant_topics == {"*", ".*", "", ".", "-", "_"}
}
