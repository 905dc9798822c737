# As whom a KafkaMirrorMaker2 connects: authentication types whose credentials
# mm2gov issues, the flow's own MirrorMaker 2 user, credentials by Secret
# reference only, and no Secret but the flow's own and the clusters' CAs.
#
# Package mm2gov.admission.rules.mirrormaker, split by concern over mirrormaker*.rego;
# the object's parts every file reads (mirrors, their ends and declared flows, the
# Connect spec, connections, config maps) are in mirrormaker.rego.
package mm2gov.admission.rules.mirrormaker

import data.mm2gov.admission.lib

# ---- authentication ----------------------------------------------------------

# Types whose credentials mm2gov issues (SCRAM and PLAIN passwords, TLS client
# certificates). `custom` runs any SASL module with any options, and OAuth
# sends credentials to a token endpoint the spec names: neither is mm2gov's.
auth_types := {"scram-sha-512", "scram-sha-256", "plain", "tls"}

password_types := {"scram-sha-512", "scram-sha-256", "plain"}

# [authentication, its path segments, the flows its connection serves].
authentications contains [auth, array.concat(segments, ["authentication"]), flows] if {
	some [connection, segments, _, flows] in connections
	auth := connection.authentication
	is_object(auth)
}

violations contains lib.violation("admission_mm2_authentication", "high", msg, path) if {
	checked
	some [connection, segments, _, _] in connections
	not is_object(object.get(connection, "authentication", null))
	path := lib.pointer(array.concat(segments, ["authentication"]))
	msg := sprintf(
		"%s: %s has no authentication, so MirrorMaker 2 connects anonymously or as its config says; authenticate as the flow's MirrorMaker 2 user: {type: scram-sha-512, username: mm2-<flow-id>, passwordSecret: {secretName: <its secret>, password: password}}",
		[lib.subject, lib.pointer(segments)],
	)
}

violations contains lib.violation("admission_mm2_authentication", "high", msg, path) if {
	checked
	some [auth, segments, _] in authentications
	not object.get(auth, "type", null) in auth_types
	path := lib.pointer(array.concat(segments, ["type"]))
	msg := sprintf(
		"%s: %s has type %v, which mm2gov does not issue credentials for (custom SASL modules and OAuth token endpoints decide themselves where credentials go); use %s",
		[lib.subject, lib.pointer(segments), shown_value(object.get(auth, "type", null)), lib.text_list(auth_types)],
	)
}

# The fields each type reads: an allow-list, so a field another type (or a
# later Strimzi) reads, such as OAuth's token endpoint and secrets or custom's
# config, cannot ride along.
auth_fields := {
	"scram-sha-512": {"type", "username", "passwordSecret"},
	"scram-sha-256": {"type", "username", "passwordSecret"},
	"plain": {"type", "username", "passwordSecret"},
	"tls": {"type", "certificateAndKey"},
}

violations contains lib.violation("admission_mm2_authentication", "high", msg, path) if {
	checked
	some [auth, segments, _] in authentications
	allowed := auth_fields[auth.type]
	some key, _ in auth
	not key in allowed
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf(
		"%s: %s sets %s, which authentication type %s does not take (it takes %s); remove it",
		[lib.subject, lib.pointer(segments), key, auth.type, lib.text_list(allowed)],
	)
}

# As whom: a password login names the flow's MirrorMaker 2 user (its own
# principal on both clusters, with the ACLs mm2gov grants it), never a
# principal of the tenant or anyone else.
# Without any declared flow the object is refused already (admission_mm2_
# flow_undeclared, _cluster_unknown or _object_malformed): its users and
# Secrets are then not reported one by one as well.
some_flow_declared if count(declared_flows) > 0

violations contains lib.violation("admission_mm2_foreign_user", "high", msg, path) if {
	checked
	some_flow_declared
	some [auth, segments, flows] in authentications
	auth.type in password_types
	user := object.get(auth, "username", null)
	expected := {lib.mm2_user(flow) | some flow in flows}
	not user in expected
	path := lib.pointer(array.concat(segments, ["username"]))
	msg := sprintf(
		"%s: %s logs in as %s, which is not the MirrorMaker 2 user of the flow it serves (%s); log in as the flow's MirrorMaker 2 user",
		[lib.subject, lib.pointer(segments), shown_value(user), users_text(expected)],
	)
}

# Authentication fields that take a Secret reference ({secretName, ...}); a
# string there is the credential itself.
inline_credential_fields := ["password", "clientSecret", "accessToken", "refreshToken", "clientAssertion"]

violations contains lib.violation("admission_mm2_inline_credentials", "critical", msg, path) if {
	checked
	some [auth, segments, _] in authentications
	some key in inline_credential_fields
	value := auth[key]
	not is_object(value)
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf(
		"%s: %s has an inline %s; credentials may only come by Secret reference: use passwordSecret: {secretName: <secret>, password: <key>}",
		[lib.subject, lib.pointer(segments), key],
	)
}

violations contains lib.violation("admission_mm2_inline_credentials", "critical", msg, path) if {
	checked
	some [auth, segments, _] in authentications
	auth.type in password_types
	not is_object(object.get(auth, "passwordSecret", null))
	path := lib.pointer(array.concat(segments, ["passwordSecret"]))
	msg := sprintf(
		"%s: %s uses type %s without a passwordSecret; give the password by Secret reference: passwordSecret: {secretName: <secret>, password: <key>}",
		[lib.subject, lib.pointer(segments), auth.type],
	)
}

# ---- Secrets -----------------------------------------------------------------

users_text(items) := lib.text_list(items) if {
	count(items) > 0
} else := "none"

# Every Secret the spec references, wherever (authentication, trusted
# certificates, pod template volumes, env, external configuration): found by
# mm2gov's webhook (input.secret_refs: [pointer, name, how]).
secret_refs := [ref |
	some ref in input.secret_refs
	is_array(ref)
	count(ref) == 3
]

# The Secrets this MirrorMaker 2 may use: its flows' own credentials (the names
# mm2gov derived: flow.mm2_secrets) and the clusters' CA certificates.
own_secrets := {secret | some flow in declared_flows; some secret in flow.mm2_secrets} | lib.ca_secret_names

violations contains lib.violation("admission_mm2_admin_credentials", "critical", msg, path) if {
	checked
	some [path, secret, _] in secret_refs
	secret in lib.admin_secret_names
	some [admin, alias] in lib.admin_secrets
	admin == secret
	msg := sprintf(
		"%s: %s names secret %s, which holds cluster %s's admin credentials or CA key and would bypass every ACL; use the flow's MirrorMaker 2 credentials",
		[lib.subject, path, secret, alias],
	)
}

# Credentials for logging in are the flow's own; a CA certificate is no password.
flow_secrets := {secret | some flow in declared_flows; some secret in flow.mm2_secrets}

usable(path) := flow_secrets if {
	contains(path, "/authentication/")
} else := own_secrets

violations contains lib.violation("admission_mm2_foreign_secret", "critical", msg, path) if {
	checked
	some_flow_declared
	some [path, secret, how] in secret_refs
	how != "pattern"
	not secret in usable(path)
	not secret in lib.admin_secret_names
	msg := sprintf(
		"%s: %s names secret '%v', which is not one of the flow's MirrorMaker 2 Secrets it may use there (%s); a MirrorMaker 2 may only log in with, mount or reference its own flow's Secrets (and trust the clusters' CAs)",
		[lib.subject, path, secret, users_text(usable(path))],
	)
}

violations contains lib.violation("admission_mm2_foreign_secret", "critical", msg, path) if {
	checked
	some [path, pattern, "pattern"] in secret_refs
	msg := sprintf(
		"%s: %s trusts every Secret matching '%v', which can be any Secret of the namespace; name the cluster's CA Secret (secretName) instead",
		[lib.subject, path, pattern],
	)
}
