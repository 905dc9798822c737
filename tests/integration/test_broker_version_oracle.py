"""The broker-compatibility tables in governance/kafka/version.py, asked of Kafka's own classes.

`APIS` claims, per API the pinned MM2 sends, the oldest and newest version its Kafka clients speak
(`<Name>RequestData.LOWEST/HIGHEST_SUPPORTED_VERSION` in kafka-clients); `METADATA_VERSIONS` claims
the names of metadata.version feature levels (`MetadataVersion` in kafka-server-common). jshell
loads the pinned Kafka's jars and prints both; a Kafka upgrade that moves a floor fails here.
"""

from __future__ import annotations

import functools

from devstack import tools as devstack_tools
from governance.kafka.version import APIS, METADATA_VERSIONS
from tests.tools import jshell as jshell_tool

SCRIPTS = {
    "apis": "\n".join(
        f'System.out.println("@{api.name} " + org.apache.kafka.common.message.{api.name}RequestData'
        f'.LOWEST_SUPPORTED_VERSION + " " + org.apache.kafka.common.message.{api.name}RequestData'
        f'.HIGHEST_SUPPORTED_VERSION);' for api in APIS),
    "metadata versions": 'for (var v : org.apache.kafka.server.common.MetadataVersion.values()) '
                         'System.out.println("@" + v.featureLevel() + " " + v.version());',
}


def jshell(script: str) -> list[str]:
    """Run `script` in jshell with the pinned Kafka's jars; its printed lines."""
    return jshell_tool.jshell(devstack_tools.kafka().classpath, script)


@functools.cache
def answers() -> dict[str, list[str]]:
    """Both tables asked of the pinned Kafka in one jshell (tests/tools/jshell.py says why)."""
    return jshell_tool.ask(devstack_tools.kafka().classpath, SCRIPTS)


def test_api_version_floors_are_kafka_clients_own():
    answered = {name[1:]: (int(low), int(high)) for name, low, high in (line.split() for line in answers()["apis"])}
    assert answered == {api.name: (api.oldest, api.newest) for api in APIS}


def test_metadata_version_names_are_kafkas_own():
    kafka = {int(level[1:]): name for level, name in (line.split() for line in answers()["metadata versions"])}
    assert kafka, "MetadataVersion printed nothing"
    # every level the table names is Kafka's, with Kafka's name (levels older than KRaft's 3.3 are not in it)
    assert {level: kafka.get(level) for level in METADATA_VERSIONS} == METADATA_VERSIONS
