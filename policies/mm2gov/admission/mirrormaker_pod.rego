# Pod overrides that could redirect names or the JVM: host aliases, DNS, the
# process environment and Java system properties.
#
# Package mm2gov.admission.rules.mirrormaker, split by concern over mirrormaker*.rego;
# the object's parts every file reads (mirrors, their ends and declared flows, the
# Connect spec, connections, config maps) are in mirrormaker.rego.
package mm2gov.admission.rules.mirrormaker

import data.mm2gov.admission.lib

# ---- pod overrides -----------------------------------------------------------

pod := p if {
	p := lib.spec.template.pod
	is_object(p)
} else := {}

# hostAliases and DNS servers decide what a bootstrap host name resolves to:
# the servers clusters.yaml names could be someone else's.
violations contains lib.violation("admission_mm2_pod_override", "high", msg, "spec/template/pod/hostAliases") if {
	checked
	aliases := pod.hostAliases
	aliases != []
	msg := sprintf("%s: spec.template.pod.hostAliases maps host names to other addresses, so the bootstrap servers may resolve elsewhere; remove it", [lib.subject])
}

violations contains lib.violation("admission_mm2_pod_override", "high", msg, path) if {
	checked
	some field in ["nameservers", "searches"]
	value := pod.dnsConfig[field]
	value != []
	path := lib.pointer(["spec", "template", "pod", "dnsConfig", field])
	msg := sprintf("%s: spec.template.pod.dnsConfig.%s changes how host names resolve, so the bootstrap servers may resolve elsewhere; remove it", [lib.subject, field])
}

violations contains lib.violation("admission_mm2_pod_override", "high", msg, "spec/template/pod/dnsPolicy") if {
	checked
	pod.dnsPolicy == "None"
	msg := sprintf("%s: spec.template.pod.dnsPolicy None takes name resolution from the spec, so the bootstrap servers may resolve elsewhere; use the cluster's DNS", [lib.subject])
}

# [env list, its path segments] of every container the spec may add variables to.
env_lists contains [env, ["spec", "template", container, "env"]] if {
	some container, settings in lib.spec.template
	env := settings.env
	is_array(env)
}

env_lists contains [env, ["spec", "externalConfiguration", "env"]] if {
	env := lib.spec.externalConfiguration.env
	is_array(env)
}

# Variables the JVM, Kafka's scripts or Strimzi's read to configure the process:
# JAVA_TOOL_OPTIONS alone can point the JAAS login at another file.
reserved_env(name) if regex.match(`^(KAFKA_|STRIMZI_|JAVA_|JDK_|_JAVA|LD_|OTEL_|CLASSPATH$)`, upper(name))

violations contains lib.violation("admission_mm2_pod_override", "high", msg, path) if {
	checked
	some [env, segments] in env_lists
	some i, variable in env
	name := lib.as_string(field_of(variable, "name"))
	reserved_env(name)
	path := lib.pointer(array.concat(segments, [i, "name"]))
	msg := sprintf(
		"%s: environment variable %s configures the JVM, Kafka or Strimzi (JAVA_*, JDK_*, KAFKA_*, STRIMZI_*, LD_*, OTEL_*, CLASSPATH) and can change where or as whom MirrorMaker 2 connects; remove it",
		[lib.subject, name],
	)
}

# Java system properties that are plainly about the network stack and nothing
# else; others (java.security.*, javax.net.ssl.*, JAAS, Kafka's own) change TLS,
# logins or connections.
allowed_system_properties := {"java.net.preferIPv4Stack", "java.net.preferIPv6Addresses", "networkaddress.cache.ttl", "networkaddress.cache.negative.ttl", "user.timezone", "file.encoding"}

violations contains lib.violation("admission_mm2_pod_override", "high", msg, path) if {
	checked
	some i, property in lib.spec.jvmOptions.javaSystemProperties
	name := field_of(property, "name")
	not name in allowed_system_properties
	path := lib.pointer(["spec", "jvmOptions", "javaSystemProperties", i, "name"])
	msg := sprintf(
		"%s: Java system property %v may change TLS, logins or connections; mm2gov allows only %s",
		[lib.subject, shown_value(name), lib.text_list(allowed_system_properties)],
	)
}
