"""A flow's generated log4j2 configuration (compile/mm2_logging.py); the real MM2 reading it is
tests/integration/test_mm2_offset_sync.py::test_each_flows_mm2_logs_json_lines_with_its_own_tenant_and_flow."""

from __future__ import annotations

import javaproperties

from governance.compile.mm2_logging import DEFAULT_LOG_DIR, LOG_DIR_PROPERTY, log4j2_path, mm2_log4j2
from governance.model.names import flow_id


def test_both_appenders_write_json_lines_with_the_flows_tenant_and_id():
    flow = flow_id("pay-ments", "on-prem", "cloud")
    props = javaproperties.loads(mm2_log4j2("pay-ments", flow, "# header"))
    for appender in ("stdout", "file"):
        layout = f"appender.{appender}.layout"
        assert props[f"{layout}.type"] == "JsonLayout" and props[f"{layout}.eventEol"] == "true"
        assert props[f"{layout}.compact"] == "true"
        assert (props[f"{layout}.tenant.key"], props[f"{layout}.tenant.value"]) == ("tenant", "pay-ments")
        assert (props[f"{layout}.flow.key"], props[f"{layout}.flow.value"]) == ("flow", flow)
    assert props["appender.file.fileName"] == f"${{sys:{LOG_DIR_PROPERTY}:-{DEFAULT_LOG_DIR}}}/{flow}.log"
    assert {props["rootLogger.appenderRef.stdout.ref"], props["rootLogger.appenderRef.file.ref"]} == {
        props["appender.stdout.name"], props["appender.file.name"]}


def test_each_flow_has_its_own_file_apart_from_the_mm2_configs():
    flows = [flow_id(t, s, d) for t in ("a", "a-b") for s, d in (("x", "y"), ("y", "x"), ("b-x", "y"))]
    paths = {log4j2_path(f) for f in flows}
    assert len(paths) == len(flows)
    assert all(p.startswith("mm2/logging/") and p.count("/") == 2 for p in paths)
