# mm2gov-labelled Secrets (the webhook sees their metadata, type and key names,
# never their data): plain Opaque secrets that hold only the credentials of
# their own tenant's users, with no secret material in the annotations.
package mm2gov.admission.rules.secrets

import data.mm2gov.admission.lib

checked if {
	lib.kind == "Secret"
	lib.content_checked
	owned
}

# A tenant's Secret, or a cluster CA certificate (which belongs to no tenant,
# and is held to the same type and annotation rules).
owned if lib.tenant

owned if lib.cluster_ca_secret

secret_type := object.get(lib.obj, "type", "Opaque")

# Kubernetes reads an empty type as Opaque. Other types (service account
# tokens, registry credentials, ...) are not mm2gov's to hold.
violations contains lib.violation("admission_secret_type", "high", msg, "type") if {
	checked
	not secret_type in {"Opaque", ""}
	msg := sprintf(
		"%s has type '%v', but mm2gov's secrets are Opaque; remove the mm2gov labels from it, or make it an Opaque secret",
		[lib.subject, secret_type],
	)
}

# mm2gov names credentials `scram-<cluster>-<user>` and `tls-<cluster>-<user>`
# (governance/model/names.py, with an encoding that gives two users never one
# name). The names are read from the repo document, never derived here: a
# Secret that follows the convention must be one of its tenant's own.
convention if {
	some prefix in ["scram-", "tls-"]
	startswith(lib.name, prefix)
}

violations contains lib.violation("admission_secret_user_not_tenant", "high", msg, "metadata/name") if {
	checked
	convention
	not lib.name in lib.tenant_secret_names
	msg := sprintf(
		"%s is named like an mm2gov credential but is not one of tenant %s's (%s); %s",
		[lib.subject, lib.tenant_name, owner_text, fix_text],
	)
}

# Who does own it, looked up only for a Secret its tenant does not own.
owners := {name |
	some name, other in data.mm2gov_repo.tenants
	some secrets in other.names.principal_secrets
	lib.name in secrets
} | {name |
	some name, other in data.mm2gov_repo.tenants
	some flow in other.flows
	lib.name in flow.mm2_secrets
}

owner_text := sprintf("it holds a credential of tenant %s", [lib.text_list(owners)]) if {
	count(owners) > 0
} else := "no user of the governance repo has a credential of that name"

fix_text := "a tenant holds only its own users' credentials: create it in its owner's namespace" if {
	count(owners) > 0
} else := "fix the name (mm2gov writes it: mm2gov secrets issue), or add the user to the repo first"

# A cluster's admin credentials or CA key never belong to a tenant.
violations contains lib.violation("admission_secret_cluster_credentials", "critical", msg, "metadata/name") if {
	checked
	lib.name in lib.admin_secret_names
	some [secret, alias] in lib.admin_secrets
	secret == lib.name
	msg := sprintf(
		"%s is cluster %s's admin credentials or CA key, which no tenant may hold; remove the mm2gov.io/tenant label (and keep it out of tenant %s's namespace)",
		[lib.subject, alias, lib.tenant_name],
	)
}

# A Secret named like a cluster's CA certificate holds what mm2gov puts in
# one, public keys only: a copy of the CA's private key (or any other key)
# in a namespace tenants read would be exposed, and workloads that trust the
# CA Secret would trust what its writer chose.
ca_public_keys := {"ca.crt", "ca.p12", "ca.password"}

violations contains lib.violation("admission_secret_ca_private", "high", msg, "metadata/name") if {
	checked
	lib.name in lib.ca_secret_names
	keys := {key | some key in object.get(lib.obj, "keys", [])}
	extra := keys - ca_public_keys
	count(extra) > 0
	msg := sprintf(
		"%s is named like a cluster CA certificate, but holds %s besides %s; a CA Secret holds public keys only: remove them, or give the Secret another name",
		[lib.subject, lib.text_list(extra), lib.text_list(ca_public_keys)],
	)
}

# mm2gov's own annotations: public facts about the secret, never its value.
allowed_annotations := {"mm2gov.io/fingerprint", "mm2gov.io/not-after", "mm2gov.io/generation", "mm2gov.io/issued-at"}

last_applied := "kubectl.kubernetes.io/last-applied-configuration"

# Why an annotation looks like secret material; undefined when it does not.
annotation_problem(key, value) := "holds a copy of the secret's data (kubectl apply writes it there); apply secrets with kubectl apply --server-side or kubectl create/replace, and remove the annotation" if {
	key == last_applied
	is_string(value)
	regex.match(`"(data|stringData)"\s*:`, value)
} else := "holds a PEM block; keep keys and certificates in the secret's data and remove the annotation" if {
	is_string(value)
	contains(value, "-----BEGIN")
} else := "is named like a credential, and annotations are shown to anyone who can read the secret's metadata; keep secret values in the secret's data and remove the annotation" if {
	not key in allowed_annotations
	key != last_applied
	regex.match(`password|secret|key|token|credential|jaas`, lower(key))
}

violations contains lib.violation("admission_secret_annotation", "high", msg, path) if {
	checked
	some key, value in lib.annotations
	problem := annotation_problem(key, value)
	path := lib.pointer(["metadata", "annotations", key])
	msg := sprintf("%s: annotation %s %s", [lib.subject, key, problem])
}
