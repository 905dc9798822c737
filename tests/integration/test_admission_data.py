"""policies/mm2gov/admission/acme_data_test.rego is exactly what tests/tools/gen_acme_admission_data.py
writes now: the Rego tests of the admission rules run on what mm2gov really generates and sends.

(Under integration because the generator asks a real OPA for the repo decision, as `mm2gov generate`
does; it needs no running stack.)
"""

from __future__ import annotations

import difflib

from tests.tools import gen_acme_admission_data


def test_committed_acme_admission_data_is_what_the_generator_writes():
    expected = gen_acme_admission_data.render()
    committed = gen_acme_admission_data.TARGET.read_text()
    diff = "".join(difflib.unified_diff(committed.splitlines(True), expected.splitlines(True),
                                        "committed", "generated", n=1))
    assert committed == expected, (
        "policies/mm2gov/admission/acme_data_test.rego is stale: run .venv/bin/python "
        f"tests/tools/gen_acme_admission_data.py\n{diff[:4000]}")
