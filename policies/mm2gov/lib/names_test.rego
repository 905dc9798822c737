package mm2gov.lib.names_test

import data.mm2gov.lib.names

test_prefix_with_separator if {
	names.ends_with_separator("payments.")
	names.ends_with_separator("payments-")
	names.ends_with_separator("payments_")
}

test_prefix_without_separator if {
	not names.ends_with_separator("pay")
	not names.ends_with_separator("payments")
}
