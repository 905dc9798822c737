# Name helpers shared by every rule: tenant prefixes and their separators.
package mm2gov.lib.names

# Separators a tenant prefix must end with (CONTRACT.md).
separators := {".", "-", "_"}

# A prefix without a trailing separator leaks through PREFIXED ACLs:
# "pay" matches "payments." and "payroll." alike.
ends_with_separator(prefix) if {
	some sep in separators
	endswith(prefix, sep)
}

# Two prefixes overlap when one starts with the other: names of one owner
# can fall under the other's prefix.
overlap(a, b) if startswith(a, b)

overlap(a, b) if startswith(b, a)

# The prefix of `prefixes` that `name` falls under, if any.
owning_prefix(name, prefixes) := prefix if {
	some prefix in prefixes
	startswith(name, prefix)
}
