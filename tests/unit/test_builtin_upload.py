"""The webhook puts the built-in policies into an OPA it does not start one module at a time (OpaEngine with
an OPA URL, in builtin_modules() order), and OPA compiles each module as it arrives: a module that calls a
function of a module not uploaded yet is refused, and the webhook does not start. One package split over
several files (policies/mm2gov/admission/mirrormaker*.rego) keeps every function another file calls in the
file that comes first; `opa check` and `opa test`, which load every file at once, cannot tell."""

from __future__ import annotations

from devstack.opa import OpaServer
from governance.policy.bundle import builtin_modules
from governance.policy.opa import OpaEngine


def test_the_builtin_modules_upload_one_at_a_time_into_an_empty_opa(tmp_path):
    server = OpaServer(tmp_path, log_level="error")
    server.start()
    try:
        with OpaEngine(builtin_modules(), server.url) as engine:
            assert engine.client is not None
    finally:
        server.stop()
