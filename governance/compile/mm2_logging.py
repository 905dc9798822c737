"""Each flow's MirrorMaker 2 logging: JSON lines carrying the flow's tenant and id, kept apart per flow.

`mm2/logging/<flow>.log4j2.properties` (a directory apart, so `mm2/*.properties` stays the flows'
MM2 configs; the MM2 is started with `-Dlog4j2.configurationFile=` pointing at it) writes every event
twice, as one compact JSON object a line with `tenant` and `flow` fields: to stdout, which a container
runtime hands to Loki/Splunk/Fluent Bit, and to `<flow>.log` in `${sys:mm2gov.log.dir}` (default
/var/log/mm2gov), rolled at 100 MB, for a dedicated MM2 on a VM. Each flow is its own process with its
own file, so no two tenants' logs mix.

The layout is log4j-core's JsonLayout (Jackson): Kafka 4's distribution ships both, while the newer
JsonTemplateLayout is a separate jar it does not. Tenant names and flow ids are DNS-label-like and
never contain `$`, so no log4j lookup can be smuggled in through them; javaproperties escapes anyway.
"""

from __future__ import annotations

from governance.files import property_comment, property_line

LOG_DIR_PROPERTY = "mm2gov.log.dir"
DEFAULT_LOG_DIR = "/var/log/mm2gov"
ROLL_SIZE = "100MB"
ROLLED_FILES = 10


def log4j2_path(flow_id: str) -> str:
    """Where `generate` writes a flow's logging configuration, relative to its output directory."""
    return f"mm2/logging/{flow_id}.log4j2.properties"


def mm2_log4j2(tenant: str, flow_id: str, header: str) -> str:
    """The log4j2 properties of one flow's MM2: JSON lines with tenant and flow, to stdout and a file."""
    def layout(appender: str) -> list[tuple[str, str]]:
        base = f"appender.{appender}.layout"
        return [(f"{base}.type", "JsonLayout"), (f"{base}.compact", "true"), (f"{base}.eventEol", "true"),
                (f"{base}.includeTimeMillis", "true"),
                (f"{base}.stacktraceAsString", "true"),
                (f"{base}.tenant.type", "KeyValuePair"), (f"{base}.tenant.key", "tenant"),
                (f"{base}.tenant.value", tenant),
                (f"{base}.flow.type", "KeyValuePair"), (f"{base}.flow.key", "flow"), (f"{base}.flow.value", flow_id)]

    log_file = f"${{sys:{LOG_DIR_PROPERTY}:-{DEFAULT_LOG_DIR}}}/{flow_id}"
    entries = [
        ("status", "warn"),
        ("name", f"mm2gov-{flow_id}"),
        ("appender.stdout.type", "Console"), ("appender.stdout.name", "STDOUT"), *layout("stdout"),
        ("appender.file.type", "RollingFile"), ("appender.file.name", "FILE"),
        ("appender.file.fileName", f"{log_file}.log"), ("appender.file.filePattern", f"{log_file}.%i.log.gz"),
        *layout("file"),
        ("appender.file.policies.type", "Policies"),
        ("appender.file.policies.size.type", "SizeBasedTriggeringPolicy"),
        ("appender.file.policies.size.size", ROLL_SIZE),
        ("appender.file.strategy.type", "DefaultRolloverStrategy"),
        ("appender.file.strategy.max", str(ROLLED_FILES)),
        ("rootLogger.level", "INFO"),
        ("rootLogger.appenderRef.stdout.ref", "STDOUT"), ("rootLogger.appenderRef.file.ref", "FILE"),
        ("logger.clients.name", "org.apache.kafka.clients"), ("logger.clients.level", "WARN"),
    ]
    lines = [header, property_comment(f" MirrorMaker 2 logging of flow {flow_id} (tenant {tenant}): JSON "
                                               "lines with tenant and flow fields, to stdout and its own file")]
    lines += [property_line(key, value) for key, value in entries]
    return "\n".join(lines) + "\n"
