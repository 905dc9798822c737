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
