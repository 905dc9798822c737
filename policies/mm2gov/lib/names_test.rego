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

test_overlap_either_way if {
	names.overlap("pay", "payments.")
	names.overlap("payments.", "pay")
	names.overlap("payments.", "payments.")
}

test_separator_prevents_overlap if {
	not names.overlap("payments.", "payroll.")
	not names.overlap("pay.", "payments.")
}

test_owning_prefix if {
	names.owning_prefix("payments.orders", ["marketing.", "payments."]) == "payments."
	not names.owning_prefix("payroll.x", ["payments."])
}
