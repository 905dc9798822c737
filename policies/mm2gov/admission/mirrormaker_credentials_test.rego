# Tests of mirrormaker_credentials.rego; the fixtures (mirror, req, ...) are mirrormaker_test.rego's.
package mm2gov.admission.rules.mirrormaker_test

import data.mm2gov.admission.lib_test as t

# ---- as whom: authentication -------------------------------------------------

test_inline_authentication_password_fires if {
	d := t.decide(req({"target": {"authentication": {"password": "hunter2"}}}, {}, {}))
	t.rules(d) == {"admission_mm2_inline_credentials", "admission_mm2_authentication"}
	t.hits(d, "admission_mm2_inline_credentials") == {"spec/target/authentication/password"}
	t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication/password"}
}

# Each type takes its own fields only: OAuth's secrets and token endpoint cannot ride along.
test_fields_of_another_type_fire if {
	oauth := {"accessToken": {"secretName": "scram-cloud-mm2-payments-onprem-to-cloud", "key": "k"}, "tokenEndpointUri": "https://x"}
	d := t.decide(req({"target": {"authentication": oauth}}, {}, {}))
	t.rules(d) == {"admission_mm2_authentication"}
	t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication/accessToken", "spec/target/authentication/tokenEndpointUri"}
	some v in d.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target/authentication sets tokenEndpointUri, which authentication type scram-sha-512 does not take (it takes passwordSecret, type, username); remove it"
}

# A CA certificate is no password.
test_ca_as_password_fires if {
	d := t.decide(with_mirror({"source": {"authentication": {"passwordSecret": {"secretName": "cluster-ca", "password": "ca.password"}}}}))
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/mirrors/0/source/authentication/passwordSecret/secretName"}
}

test_scram_without_password_secret_fires if {
	no_secret := object.union(object.remove(target, ["authentication"]), {"authentication": object.remove(auth("cloud"), ["passwordSecret"])})
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": no_secret})))
	t.hits(d, "admission_mm2_inline_credentials") == {"spec/target/authentication/passwordSecret"}
	d2 := t.decide(req({"target": {"authentication": {"passwordSecret": "scram-cloud-x"}}}, {}, {}))
	t.hits(d2, "admission_mm2_inline_credentials") == {"spec/target/authentication/passwordSecret"}
}

test_tls_authentication_pass if {
	tls_auth := {"type": "tls", "certificateAndKey": {"secretName": "tls-cloud-mm2-payments-onprem-to-cloud", "certificate": "user.crt", "key": "user.key"}}
	t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": object.union(object.remove(target, ["authentication"]), {"authentication": tls_auth})}))).allowed
}

test_foreign_user_fires if {
	d := t.decide(with_mirror({"source": {"authentication": {"username": "marketing-app"}}}))
	t.rules(d) == {"admission_mm2_foreign_user"}
	t.hits(d, "admission_mm2_foreign_user") == {"spec/mirrors/0/source/authentication/username"}
	t.message(d, "admission_mm2_foreign_user") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/mirrors/0/source/authentication logs in as 'marketing-app', which is not the MirrorMaker 2 user of the flow it serves (mm2-payments-onprem-to-cloud); log in as the flow's MirrorMaker 2 user"
	d2 := t.decide(with_mirror({"source": {"authentication": {"username": "payments-app"}}}))
	t.rules(d2) == {"admission_mm2_foreign_user"}
}

test_admin_credentials_fire if {
	d := t.decide(with_mirror({"source": {"authentication": {"passwordSecret": {"secretName": "cluster-admin"}}}}))
	t.rules(d) == {"admission_mm2_admin_credentials"}
	t.hits(d, "admission_mm2_admin_credentials") == {"spec/mirrors/0/source/authentication/passwordSecret/secretName"}
	d.violations[0].severity == "critical"
	tls := {"type": "tls", "certificateAndKey": {"secretName": "cluster-ca-key", "certificate": "ca.crt", "key": "ca.key"}}
	d2 := t.decide(req({"target": {"authentication": tls}}, {}, {}))
	t.hits(d2, "admission_mm2_admin_credentials") == {"spec/target/authentication/certificateAndKey/secretName"}
}

test_missing_authentication_fires if {
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": object.remove(target, ["authentication"])})))
	t.rules(d) == {"admission_mm2_authentication"}
	t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication"}
	contains(t.message(d, "admission_mm2_authentication"), "has no authentication, so MirrorMaker 2 connects anonymously")
}

test_custom_and_oauth_authentication_fire if {
	every type in ["custom", "oauth", "scram-sha-1"] {
		d := t.decide(req({"target": {"authentication": {"type": type}}}, {}, {}))
		t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication/type"}
	}
	custom := {"type": "custom", "sasl": true, "config": {"sasl.mechanism": "PLAIN"}}
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": object.union(object.remove(target, ["authentication"]), {"authentication": custom})})))
	t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication/type"}
	contains(t.message(d, "admission_mm2_authentication"), "has type 'custom', which mm2gov does not issue credentials for")
	untyped := object.union(object.remove(target, ["authentication"]), {"authentication": object.remove(auth("cloud"), ["type"])})
	d2 := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": untyped})))
	contains(t.message(d2, "admission_mm2_authentication"), "has type unset")
}

test_plain_and_scram_256_pass if {
	t.decide(req({"target": {"authentication": {"type": "plain"}}}, {}, {})).allowed
	t.decide(req({"target": {"authentication": {"type": "scram-sha-256"}}}, {}, {})).allowed
}

test_missing_username_fires if {
	no_user := object.union(object.remove(target, ["authentication"]), {"authentication": object.remove(auth("cloud"), ["username"])})
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": no_user})))
	t.rules(d) == {"admission_mm2_foreign_user"}
	contains(t.message(d, "admission_mm2_foreign_user"), "logs in as unset")
}

# ---- Secrets -----------------------------------------------------------------

test_foreign_password_secret_fires if {
	d := t.decide(with_mirror({"source": {"authentication": {"passwordSecret": {"secretName": "scram-onprem-payments-app"}}}}))
	t.rules(d) == {"admission_mm2_foreign_secret"}
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/mirrors/0/source/authentication/passwordSecret/secretName"}
	d.violations[0].severity == "critical"
	startswith(t.message(d, "admission_mm2_foreign_secret"), "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/mirrors/0/source/authentication/passwordSecret/secretName names secret 'scram-onprem-payments-app', which is not one of the flow's MirrorMaker 2 Secrets it may use there (scram-cloud-mm2-payments-onprem-to-cloud")
}

test_tls_certificate_of_another_user_fires if {
	tls_auth := {"type": "tls", "certificateAndKey": {"secretName": "tls-cloud-mm2-marketing-cloud-to-onprem", "certificate": "user.crt", "key": "user.key"}}
	d := t.decide(req({"target": {"authentication": tls_auth}}, {}, {}))
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/target/authentication/certificateAndKey/secretName"}
}

test_trusted_certificates_checked if {
	trusted := {"trustedCertificates": [{"secretName": "scram-cloud-payments-app", "certificate": "password"}, {"pattern": "*", "certificate": "ca.crt"}]}
	d := t.decide(req({"target": {"tls": trusted}}, {}, {}))
	t.rules(d) == {"admission_mm2_foreign_secret", "admission_mm2_tls"}
	t.hits(d, "admission_mm2_tls") == {"spec/target/tls/trustedCertificates/0/secretName"}
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/target/tls/trustedCertificates/0/secretName", "spec/target/tls/trustedCertificates/1/pattern"}
	some v in d.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target/tls/trustedCertificates/1/pattern trusts every Secret matching '*', which can be any Secret of the namespace; name the cluster's CA Secret (secretName) instead"
}

template := {
	"pod": {"volumes": [
		{"name": "own", "secret": {"secretName": "scram-cloud-mm2-payments-onprem-to-cloud"}},
		{"name": "theirs", "secret": {"secretName": "scram-cloud-marketing-app"}},
		{"name": "projected", "projected": {"sources": [{"secret": {"name": "cluster-admin"}}]}},
		{"name": "csi", "csi": {"driver": "x", "nodePublishSecretRef": {"name": "scram-onprem-marketing-app"}}},
	]},
	"connectContainer": {"env": [
		{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "scram-cloud-payments-app", "key": "password"}}},
		{"name": "OWN", "valueFrom": {"secretKeyRef": {"name": "scram-onprem-mm2-payments-onprem-to-cloud", "key": "password"}}},
	]},
}

test_template_secrets_checked if {
	d := t.decide(req({"template": template}, {}, {}))
	t.rules(d) == {"admission_mm2_foreign_secret", "admission_mm2_admin_credentials"}
	t.hits(d, "admission_mm2_foreign_secret") == {
		"spec/template/pod/volumes/1/secret/secretName",
		"spec/template/pod/volumes/3/csi/nodePublishSecretRef/name",
		"spec/template/connectContainer/env/0/valueFrom/secretKeyRef/name",
	}
	t.hits(d, "admission_mm2_admin_credentials") == {"spec/template/pod/volumes/2/projected/sources/0/secret/name"}
	some v in d.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/template/pod/volumes/2/projected/sources/0/secret/name names secret cluster-admin, which holds cluster cloud's admin credentials or CA key and would bypass every ACL; use the flow's MirrorMaker 2 credentials"
}

test_external_configuration_checked if {
	external := {"externalConfiguration": {
		"env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "scram-cloud-marketing-app", "key": "password"}}}],
		"volumes": [{"name": "v", "secret": {"secretName": "tls-cloud-payments-app"}}],
	}}
	d := t.decide(req(external, {}, {}))
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/externalConfiguration/env/0/valueFrom/secretKeyRef/name", "spec/externalConfiguration/volumes/0/secret/secretName"}
}

# Secret references come from the webhook (it finds them wherever they are).
test_secret_refs_come_from_the_webhook if {
	d := t.decide(object.union(with_mirror({}), {"secret_refs": [["spec/anywhere/secretName", "scram-cloud-marketing-app", "secretName"], "garbage", [1, 2]]}))
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/anywhere/secretName"}
}
