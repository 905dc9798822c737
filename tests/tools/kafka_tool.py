"""Kafka's own admin tools (Java's client, not ours) run against a stack's cluster: the oracle for what the
brokers hold."""

from __future__ import annotations

import subprocess
from pathlib import Path

CONFIG_COMMAND = "kafka.admin.ConfigCommand"  # what kafka-configs.sh runs
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"  # what kafka-acls.sh runs


def kafka_tool(stack, cluster: str, user: str, password: str, main_class: str, *args: str, tmp_path: Path) -> str:
    """Run one of Kafka's own admin tools as `user` (Java's client, not ours): stdout + stderr."""
    from devstack import tools
    from devstack.process import QUICK_JVM

    kafka = stack.kafka[cluster]
    config = tmp_path / f"{cluster}-{user}.properties"
    config.write_text("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
                      "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                      f'username="{user}" password="{password}";\n'
                      f"ssl.truststore.type=PEM\nssl.truststore.location={kafka.ca_pem_path}\n")
    config.chmod(0o600)
    done = subprocess.run([str(tools.java()), "-Xmx256m", *QUICK_JVM, "-cp", tools.kafka().classpath, main_class,
                           "--bootstrap-server", kafka.bootstrap_servers, "--command-config", str(config), *args],
                          capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr
