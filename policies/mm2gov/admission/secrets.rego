# mm2gov-labelled Secrets (the webhook sees their metadata, type and key names,
# never their data): plain Opaque secrets that hold only the credentials of
# their own tenant's users, with no secret material in the annotations.
package mm2gov.admission.rules.secrets

import data.mm2gov.admission.lib

checked if {
	lib.kind == "Secret"
	lib.content_checked
	lib.tenant
}

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

# mm2gov names credentials `scram-<cluster>-<user>` (secrets/names.py) and
# `tls-<cluster>-<user>`; cluster aliases and users may contain "-", so the
# name is matched against the known aliases rather than split.
convention := prefix if {
	some prefix in ["scram-", "tls-"]
	startswith(lib.name, prefix)
}

rest := substring(lib.name, count(convention), -1)

# [alias, user part] for every alias the name can start with.
splits := [[alias, substring(rest, count(alias) + 1, -1)] |
	some alias, _ in lib.repo_clusters
	startswith(rest, concat("", [alias, "-"]))
]

tenant_user_names := {lib.dns_safe(u) | some u in lib.tenant_users}

violations contains lib.violation("admission_secret_cluster_unknown", "high", msg, "metadata/name") if {
	checked
	count(splits) == 0
	msg := sprintf(
		"%s follows mm2gov's %s<cluster>-<user> naming but names no cluster of clusters.yaml (%s); fix the name, or add the cluster to clusters.yaml first",
		[lib.subject, convention, lib.text_list(object.keys(lib.repo_clusters))],
	)
}

violations contains lib.violation("admission_secret_user_not_tenant", "high", msg, "metadata/name") if {
	checked
	count(splits) > 0
	every split in splits {
		not split[1] in tenant_user_names
	}
	msg := sprintf(
		"%s holds credentials of user '%s' on cluster %s, which is not a user of tenant %s (%s); a tenant holds only its own users' credentials: label it with the user's tenant, or fix the name",
		[lib.subject, splits[0][1], splits[0][0], lib.tenant_name, user_names_text],
	)
}

user_names_text := lib.text_list(tenant_user_names) if {
	count(tenant_user_names) > 0
} else := "none"

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
