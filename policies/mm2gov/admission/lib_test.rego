# Tests of mm2gov.admission.lib, and the requests every admission test builds
# on: the repo is mm2gov.lib.input_test's `base` (payments with a default flow
# onprem -> cloud and a grant to marketing; marketing, read-only, with an
# identity flow cloud -> onprem); tests change one thing of a clean request.
package mm2gov.admission.lib_test

import data.mm2gov.admission
import data.mm2gov.admission.lib
import data.mm2gov.lib.input_test as fx

# ---- fixtures -------------------------------------------------------------

# A repo with the fields mm2gov adds for the admission rules (governance/policy/
# input.py): per cluster its bootstrap servers as a list and its Strimzi names,
# per tenant and flow the names of its credential Secrets, and MirrorMaker 2's
# settings table (settings_fixture_test.rego). Test data: the names follow one
# plain scheme here; mm2gov derives them in governance/model/names.py.
with_names(r) := object.union(r, {
	"mm2_settings": mm2_settings,
	"clusters": {alias: object.union(c, {
		"bootstrap_server_list": [c.bootstrap_servers],
		"strimzi_cluster": alias,
		"strimzi_namespace": sprintf("kafka-%s", [alias]),
	}) |
		some alias, c in r.clusters
	},
	"tenants": {name: named_tenant(r, tenant) | some name, tenant in r.tenants},
})

named_tenant(r, tenant) := object.union(tenant, {
	"names": {
		"namespace": tenant.name,
		"principal_secrets": [user_secrets(r, substring(p.name, 5, -1)) | some p in tenant.principals],
	},
	"flows": [object.union(f, {"mm2_secrets": user_secrets(r, f.mm2_user)}) | some f in tenant.flows],
})

user_secrets(r, user) := sort([sprintf("%s-%s-%s", [kind, alias, user]) |
	some kind in ["scram", "tls"]
	some alias, _ in r.clusters
])

repo := with_names(fx.base)

# A request as mm2gov's webhook sends it, with the facts it computes from the
# object (here by test helpers that do what governance/admission/facts.py does).
request(kind, name, tenant, obj) := {
	"operation": "CREATE",
	"kind": kind,
	"namespace": "kafka-cloud",
	"name": name,
	"tenant": tenant,
	"tenant_from": "namespace",
	"old_tenant": "",
	"object": obj,
	"patterns": {},
	"mirror_patterns": mirror_patterns(obj),
	"bootstrap_servers": bootstrap_servers(obj),
	"secret_refs": secret_refs(obj),
}

# Test helpers only: the policy never splits lists or walks the spec itself.
list_items(value) := [trim_space(item) | some item in split(value, ",")] if {
	trim_space(value) != ""
} else := []

mirror_patterns(obj) := [mirror_items(m) | some m in obj.spec.mirrors] if {
	is_array(obj.spec.mirrors)
} else := []

mirror_items(m) := {field: list_items(m[field]) |
	some field in ["topicsPattern", "topicsExcludePattern", "groupsPattern", "groupsExcludePattern"]
	is_string(m[field])
} if {
	is_object(m)
} else := null

bootstrap_servers(obj) := {lib.pointer(array.concat(["spec"], path)): [lower(s) | some s in list_items(value)] |
	walk(obj.spec, [path, value])
	count(path) > 0
	path[count(path) - 1] == "bootstrapServers"
	is_string(value)
}

secret_refs(obj) := [[lib.pointer(array.concat(["spec"], path)), value, how] |
	walk(obj.spec, [path, value])
	how := ref_kind(path)
]

ref_kind(path) := "secretName" if {
	path[count(path) - 1] == "secretName"
} else := path[count(path) - 2] if {
	path[count(path) - 1] == "name"
	path[count(path) - 2] in {"secretKeyRef", "secretRef", "nodePublishSecretRef", "secret"}
} else := "pattern" if {
	path[count(path) - 1] == "pattern"
	path[count(path) - 3] in {"trustedCertificates", "tlsTrustedCertificates"}
}

# The decision on a request against `repo`.
decide(req) := d if {
	d := admission.decision with input as req with data.mm2gov_repo as repo
}

# The decision against another repo (given as the repo rules see it).
decide_in(req, other) := d if {
	d := admission.decision with input as req with data.mm2gov_repo as with_names(other)
}

# {location, ...} of the violations of `rule`.
hits(decision, rule) := {v.location | some v in decision.violations; v.rule == rule}

rules(decision) := {v.rule | some v in decision.violations}

# The message of the one violation of `rule`.
message(decision, rule) := msg if {
	msgs := [v.message | some v in decision.violations; v.rule == rule]
	count(msgs) == 1
	msg := msgs[0]
}

# Facts Python sends for a regex with one alternative.
facts(regex, literal) := {
	"regex": regex,
	"case_insensitive": false,
	"alternatives": [{"literal_prefix": literal, "exact": false}],
}

# ---- the request ----------------------------------------------------------

test_fields_read_defensively if {
	lib.operation == "" with input as "garbage"
	lib.kind == "" with input as {"kind": 7}
	lib.obj == {} with input as {"object": []}
	lib.spec == {} with input as {"object": {"spec": "x"}}
	lib.labels == {} with input as {"object": {"metadata": {"labels": null}}}
	lib.annotations == {"a": "b"} with input as {"object": {"metadata": {"annotations": {"a": "b"}}}}
}

test_content_checked_only_on_create_and_update if {
	lib.content_checked with input as {"operation": "CREATE"}
	lib.content_checked with input as {"operation": "UPDATE"}
	not lib.content_checked with input as {"operation": "DELETE"}
	not lib.content_checked with input as {"operation": "CONNECT"}
}

test_subject if {
	lib.subject == "KafkaUser payments-app" with input as {"kind": "KafkaUser", "name": "payments-app"}
	lib.subject == "KafkaUser (unnamed)" with input as {"kind": "KafkaUser"}
}

test_pointer_escapes_slash_and_tilde if {
	lib.pointer(["metadata", "labels", "mm2gov.io/tenant"]) == "metadata/labels/mm2gov.io~1tenant"
	lib.pointer(["spec", "mirrors", 0, "a~b"]) == "spec/mirrors/0/a~0b"
}

test_is_false if {
	lib.is_false(false)
	lib.is_false("false")
	lib.is_false(" FALSE ")
	not lib.is_false(true)
	not lib.is_false("no")
	not lib.is_false(null)
}

test_as_string if {
	lib.as_string("a") == "a"
	lib.as_string(1) == ""
}

# ---- the tenant -----------------------------------------------------------

test_tenant_names if {
	lib.tenant_users == {"payments-app", "mm2-payments-onprem-to-cloud"} with input as {"tenant": "payments"} with data.mm2gov_repo as repo
	lib.all_remote_prefixes == {"onprem.payments."} with input as {"tenant": "payments"} with data.mm2gov_repo as repo
	lib.internal_prefixes == {"mm2gov.payments-onprem-to-cloud."} with input as {"tenant": "payments"} with data.mm2gov_repo as repo
	lib.all_remote_prefixes == {"marketing."} with input as {"tenant": "marketing"} with data.mm2gov_repo as repo
}

test_unknown_tenant_is_undefined if {
	not lib.tenant with input as {"tenant": "nobody"} with data.mm2gov_repo as repo
	lib.flows == [] with input as {"tenant": "nobody"} with data.mm2gov_repo as repo
	lib.repo_clusters == {} with data.mm2gov_repo as {}
}

test_principal_access_merges_duplicates if {
	twice := fx.repo([fx.tenant("risk", {"principals": [
		{"name": "User:risk-app", "access": ["read"]},
		{"name": "User:risk-app", "access": ["write"]},
	]})])
	lib.principal_access("risk-app") == {"read", "write"} with input as {"tenant": "risk"} with data.mm2gov_repo as twice
	lib.principal_access("other") == set() with input as {"tenant": "risk"} with data.mm2gov_repo as twice
}

test_grants_received_with_remote_names if {
	lib.granted_prefixes == {"payments.public.", "onprem.payments.public."} with input as {"tenant": "marketing"} with data.mm2gov_repo as repo
	lib.granted_prefixes == set() with input as {"tenant": "payments"} with data.mm2gov_repo as repo
}

# With the repo decision's scopes pushed as data.mm2gov_scopes, grants come
# from there, not from a walk over every tenant.
test_grants_received_from_pushed_scopes if {
	scopes := data.mm2gov.scopes.scopes with input as repo
	lib.granted_prefixes == {"payments.public.", "onprem.payments.public."} with input as {"tenant": "marketing"}
		with data.mm2gov_repo as repo
		with data.mm2gov_scopes as scopes
	lib.granted_prefixes == set() with input as {"tenant": "marketing"}
		with data.mm2gov_repo as repo
		with data.mm2gov_scopes as {"marketing": {"grants_received": []}}
}

test_invalid_grants_are_not_received if {
	bad := object.union(fx.payments, {"grants": [
		{"to": "marketing", "topics": ["payments.x."], "access": ["read", "write"]},
		{"to": "marketing", "topics": ["payments.y.", "risk."], "access": ["read"]},
		{"to": "marketing", "topics": ["*"], "access": ["read"]},
	]})
	lib.granted_prefixes == set() with input as {"tenant": "marketing"} with data.mm2gov_repo as fx.repo([bad, fx.marketing])
}

test_admin_secrets if {
	lib.admin_secrets == {["cluster-admin", "onprem"], ["cluster-admin", "cloud"], ["cluster-admin", "dr"], ["cluster-ca-key", "onprem"], ["cluster-ca-key", "cloud"], ["cluster-ca-key", "dr"]} with data.mm2gov_repo as repo
}

# ---- names ----------------------------------------------------------------

test_inside_needs_the_separator if {
	lib.inside("payments.orders", ["payments."])
	not lib.inside("payments", ["payments."])
	not lib.inside(7, ["payments."])
}

test_user_secrets_are_read_from_the_repo if {
	lib.user_secrets("payments-app") == {"scram-cloud-payments-app", "scram-dr-payments-app", "scram-onprem-payments-app", "tls-cloud-payments-app", "tls-dr-payments-app", "tls-onprem-payments-app"} with input as {"tenant": "payments"} with data.mm2gov_repo as repo
	lib.user_secrets("mm2-payments-onprem-to-cloud") == {"scram-cloud-mm2-payments-onprem-to-cloud", "scram-dr-mm2-payments-onprem-to-cloud", "scram-onprem-mm2-payments-onprem-to-cloud", "tls-cloud-mm2-payments-onprem-to-cloud", "tls-dr-mm2-payments-onprem-to-cloud", "tls-onprem-mm2-payments-onprem-to-cloud"} with input as {"tenant": "payments"} with data.mm2gov_repo as repo
	lib.user_secrets("marketing-app") == set() with input as {"tenant": "payments"} with data.mm2gov_repo as repo
	count(lib.tenant_secret_names) == 12 with input as {"tenant": "payments"} with data.mm2gov_repo as repo
	lib.ca_secret_names == {"cluster-ca"} with data.mm2gov_repo as repo
}

test_object_cluster if {
	lib.object_cluster == "cloud" with input as {"namespace": "kafka-cloud", "object": {"metadata": {"labels": {"strimzi.io/cluster": "cloud"}}}} with data.mm2gov_repo as repo
	lib.object_cluster == "cloud" with input as {"namespace": "elsewhere", "object": {"metadata": {"labels": {"strimzi.io/cluster": "cloud"}}}} with data.mm2gov_repo as repo
	lib.object_cluster == "" with input as {"namespace": "kafka-cloud", "object": {"metadata": {"labels": {"strimzi.io/cluster": "my-cluster"}}}} with data.mm2gov_repo as repo
	renamed := object.union(repo, {"clusters": {"cloud": {"strimzi_cluster": "my-cluster"}}})
	lib.object_cluster == "cloud" with input as {"namespace": "kafka-cloud", "object": {"metadata": {"labels": {"strimzi.io/cluster": "my-cluster"}}}} with data.mm2gov_repo as renamed
	lib.label_clusters == {"cloud"} with input as {"namespace": "x", "object": {"metadata": {"labels": {"strimzi.io/cluster": "my-cluster"}}}} with data.mm2gov_repo as renamed
	lib.label_clusters == set() with input as {"object": {}} with data.mm2gov_repo as repo
}

test_label_tenant if {
	lib.label_tenant == "payments" with input as {"object": {"metadata": {"labels": {"mm2gov.io/tenant": "payments"}}}}
	lib.label_tenant == null with input as {"object": {}}
}

test_text_list_sorts if {
	lib.text_list({"b", "a"}) == "a, b"
	lib.text_list([2, 1]) == "1, 2"
}
