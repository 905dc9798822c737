package mm2gov.admission.rules.secrets_test

import data.mm2gov.admission
import data.mm2gov.admission.lib_test as t
import data.mm2gov.lib.input_test as fx

secret(name, overrides) := object.union(
	{
		"apiVersion": "v1",
		"kind": "Secret",
		"metadata": {"name": name, "namespace": "kafka-cloud", "labels": {"app.kubernetes.io/managed-by": "mm2gov"}},
		"type": "Opaque",
		"keys": ["password", "sasl.jaas.config"],
	},
	overrides,
)

decide(tenant, name, overrides) := t.decide(t.request("Secret", name, tenant, secret(name, overrides)))

test_tenant_credentials_pass if {
	decide("payments", "scram-cloud-payments-app", {}).allowed
	decide("payments", "scram-onprem-mm2-payments-onprem-to-cloud", {}).allowed
	decide("payments", "tls-dr-payments-app", {}).allowed
}

test_other_names_pass if {
	decide("payments", "payments-extra", {}).allowed
}

test_secret_without_type_pass if {
	t.decide(t.request("Secret", "scram-cloud-payments-app", "payments", {"metadata": {"name": "scram-cloud-payments-app"}})).allowed
}

test_other_secret_type_fires if {
	d := decide("payments", "scram-cloud-payments-app", {"type": "kubernetes.io/service-account-token"})
	t.rules(d) == {"admission_secret_type"}
	t.hits(d, "admission_secret_type") == {"type"}
	t.message(d, "admission_secret_type") == "Secret scram-cloud-payments-app has type 'kubernetes.io/service-account-token', but mm2gov's secrets are Opaque; remove the mm2gov labels from it, or make it an Opaque secret"
}

test_other_tenants_user_fires if {
	d := decide("payments", "scram-cloud-marketing-app", {})
	t.rules(d) == {"admission_secret_user_not_tenant"}
	t.hits(d, "admission_secret_user_not_tenant") == {"metadata/name"}
	t.message(d, "admission_secret_user_not_tenant") == "Secret scram-cloud-marketing-app is named like an mm2gov credential but is not one of tenant payments's (it holds a credential of tenant marketing); a tenant holds only its own users' credentials: create it in its owner's namespace"
	d2 := decide("payments", "tls-onprem-mm2-marketing-cloud-to-onprem", {})
	contains(t.message(d2, "admission_secret_user_not_tenant"), "it holds a credential of tenant marketing")
}

# Names are the repo's, never split or derived here: a name of no user is refused.
test_unknown_credential_name_fires if {
	every name in ["tls-elsewhere-payments-app", "scram-cloud-payments-app-x", "scram-cloud-Payments-App", "tls-"] {
		d := decide("payments", name, {})
		t.rules(d) == {"admission_secret_user_not_tenant"}
		contains(t.message(d, "admission_secret_user_not_tenant"), "no user of the governance repo has a credential of that name); fix the name")
	}
}

# Whatever scheme mm2gov's names follow, the repo's names are what count.
test_names_from_the_repo if {
	odd := object.union(t.repo, {"tenants": {"payments": {"names": {"principal_secrets": [["scram-cloud-payments.hdeadbeef"]]}}}})
	req := t.request("Secret", "scram-cloud-payments.hdeadbeef", "payments", secret("scram-cloud-payments.hdeadbeef", {}))
	admission.decision.allowed with input as req with data.mm2gov_repo as odd
}

test_tenant_without_users if {
	empty := object.union(fx.base, {"tenants": {"payments": {"principals": [], "flows": []}}})
	req := t.request("Secret", "scram-cloud-payments-app", "payments", secret("scram-cloud-payments-app", {}))
	t.rules(t.decide_in(req, empty)) == {"admission_secret_user_not_tenant"}
}

test_cluster_credentials_fire if {
	d := decide("payments", "cluster-admin", {})
	t.rules(d) == {"admission_secret_cluster_credentials"}
	d.violations[0].severity == "critical"
	count(d.violations) == 3
	t.decide(t.request("Secret", "cluster-ca-key", "payments", secret("cluster-ca-key", {}))).violations[0].rule == "admission_secret_cluster_credentials"
}

test_mm2gov_annotations_pass if {
	annotations := {
		"mm2gov.io/fingerprint": "sha256:ab12",
		"mm2gov.io/not-after": "2030-01-01T00:00:00Z",
		"mm2gov.io/generation": "3",
		"mm2gov.io/issued-at": "2025-01-01T00:00:00Z",
		"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}`,
		"description": "SCRAM credentials of payments-app",
	}
	decide("payments", "scram-cloud-payments-app", {"metadata": {"annotations": annotations}}).allowed
}

test_credential_named_annotation_fires if {
	d := decide("payments", "scram-cloud-payments-app", {"metadata": {"annotations": {"mm2gov.io/password": "x", "example.com/api-key": "y"}}})
	t.rules(d) == {"admission_secret_annotation"}
	t.hits(d, "admission_secret_annotation") == {"metadata/annotations/mm2gov.io~1password", "metadata/annotations/example.com~1api-key"}
	some v in d.violations
	v.message == "Secret scram-cloud-payments-app: annotation mm2gov.io/password is named like a credential, and annotations are shown to anyone who can read the secret's metadata; keep secret values in the secret's data and remove the annotation"
}

test_pem_annotation_fires if {
	d := decide("payments", "scram-cloud-payments-app", {"metadata": {"annotations": {"note": "-----BEGIN PRIVATE KEY-----\nMIIE"}}})
	contains(t.message(d, "admission_secret_annotation"), "annotation note holds a PEM block")
}

test_last_applied_with_data_fires if {
	applied := `{"apiVersion":"v1","data":{"password":"aHVudGVyMg=="},"kind":"Secret"}`
	d := decide("payments", "scram-cloud-payments-app", {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": applied}}})
	t.hits(d, "admission_secret_annotation") == {"metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"}
	contains(t.message(d, "admission_secret_annotation"), "holds a copy of the secret's data")
	not contains(t.message(d, "admission_secret_annotation"), "aHVudGVyMg")
}

ca_labels := {"metadata": {"labels": {"app.kubernetes.io/managed-by": "mm2gov", "mm2gov.io/kind": "ca"}}}

test_cluster_ca_secret_needs_no_tenant if {
	ca := secret("cluster-ca", object.union(ca_labels, {"keys": ["ca.crt", "ca.p12", "ca.password"]}))
	t.decide(t.request("Secret", "cluster-ca", "", ca)).allowed
}

test_ca_secret_with_a_private_key_or_an_unknown_name_needs_a_tenant if {
	with_key := secret("cluster-ca", object.union(ca_labels, {"keys": ["ca.crt", "ca.key"]}))
	t.rules(t.decide(t.request("Secret", "cluster-ca", "", with_key))) == {"admission_tenant_missing"}
	unknown := secret("someone-ca", object.union(ca_labels, {"keys": ["ca.crt"]}))
	t.rules(t.decide(t.request("Secret", "someone-ca", "", unknown))) == {"admission_tenant_missing"}
	no_keys := secret("cluster-ca", object.union(ca_labels, {"keys": "ca.crt"}))
	t.rules(t.decide(t.request("Secret", "cluster-ca", "", no_keys))) == {"admission_tenant_missing"}
}

test_ca_secret_with_private_keys_fires if {
	public := secret("cluster-ca", object.union(ca_labels, {"keys": ["ca.crt", "ca.p12", "ca.password"]}))
	t.decide(t.request("Secret", "cluster-ca", "payments", public)).allowed
	leaked := secret("cluster-ca", object.union(ca_labels, {"keys": ["ca.crt", "ca.key"]}))
	d := t.decide(t.request("Secret", "cluster-ca", "payments", leaked))
	t.rules(d) == {"admission_secret_ca_private"}
	t.message(d, "admission_secret_ca_private") == "Secret cluster-ca is named like a cluster CA certificate, but holds ca.key besides ca.crt, ca.p12, ca.password; a CA Secret holds public keys only: remove them, or give the Secret another name"
}

# A CA certificate Secret needs no tenant, but it is no token or key holder.
test_cluster_ca_secret_of_another_type_fires if {
	token := secret("cluster-ca", object.union(ca_labels, {"keys": ["ca.crt"], "type": "kubernetes.io/service-account-token"}))
	t.rules(t.decide(t.request("Secret", "cluster-ca", "", token))) == {"admission_secret_type"}
	noted := secret("cluster-ca", object.union(ca_labels, {"keys": ["ca.crt"], "metadata": {"annotations": {"note": "-----BEGIN PRIVATE KEY-----"}}}))
	t.rules(t.decide(t.request("Secret", "cluster-ca", "", noted))) == {"admission_secret_annotation"}
}
