"""The MM2 keys Kafka 4 removed, and `mm2gov import`'s translation of the legacy exclusions, asked of Kafka's code.

Kafka 3.9.2's MirrorMaker 2 (jshell on its jars: `Utils.loadProps`, `MirrorMakerConfig.connectorBaseConfig`,
`DefaultTopicFilter`, `DefaultGroupFilter`) says what a legacy file's `*.blacklist` / `*.exclude` keys excluded;
the pinned 4.x (the Java oracle) says what the flow `mm2gov import` + `generate` made of that file replicates.
Within the flow's topics, the generated flow excludes exactly what the legacy MM2 excluded, plus mm2gov's own
exclusions, never less; while Kafka 4 given the legacy file as is ignores the blacklists (KAFKA-17529).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from devstack import tools as devstack_tools
from governance.compile.mm2 import GROUPS_EXCLUDE, TOPICS_EXCLUDE
from governance.config.regex import java_list_matcher, split_list
from governance.importer import REMOVED_IN_KAFKA_4
from tests.tools.in_process import run_in_process
from tests.tools.jshell import ask

pytestmark = [pytest.mark.integration,
              pytest.mark.usefixtures("decided_by_warm_opa")]  # its mm2gov runs ask one warm OPA (tests/conftest.py)

TOPICS = ["pay.orders", "pay.secret.keys", "pay.secrets", "pay.tmp.1", "pay.ex.a", "pay.x.internal",
          "pay.x-internal", "pay.r.replica", "pay.xreplica", "pay.ok", "pay.tmpx", "other.orders",
          "__consumer_offsets", "mm2gov.f.configs"]
GROUPS = ["imported-app", "imported-test-1", "imported-tmp", "connect-imported", "console-consumer-1",
          "__x", "imported-ok"]
HEAD = """clusters = src, dst
src.bootstrap.servers = src:9093
dst.bootstrap.servers = dst:9093
src.security.protocol = SSL
dst.security.protocol = SSL
sync.topic.acls.enabled = false
src->dst.enabled = true
src->dst.topics = pay\\\\..*
src->dst.groups = imported-.*
"""
# Each legacy file's own exclusion keys, as the replication guides write them for Kafka 3.x.
CASES = {
    "top-level blacklists": "topics.blacklist = pay\\\\.secret.*, pay\\\\.tmp\\\\..*\n"
                            "groups.blacklist = imported-test.*\n",
    "pair-scoped blacklist over a top-level one": "topics.blacklist = pay\\\\.tmp\\\\..*\n"
                                                  "src->dst.topics.blacklist = pay\\\\.secret.*\n",
    "exclude beats a blacklist": "topics.exclude = pay\\\\.ex\\\\..*\nsrc->dst.topics.blacklist = pay\\\\.secret.*\n"
                                 "src->dst.groups.exclude = imported-tmp\n",
    "the documented defaults, copied": "topics.blacklist = .*[\\-\\.]internal, .*\\.replica, __.*\n"
                                       "groups.blacklist = console-consumer-.*, connect-.*, __.*\n",
    "no exclusion key": "",
}


def _java_strings(names: list[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


MIRROR = "org.apache.kafka.connect.mirror"


def filters_script(path: Path) -> str:
    """Prints the topics and groups a Kafka's MM2 passes for the src->dst pair of the file at `path`."""
    return "\n".join([
        f'var config = new {MIRROR}.MirrorMakerConfig(org.apache.kafka.common.utils.Utils.propsToStringMap('
        f'org.apache.kafka.common.utils.Utils.loadProps("{path}")));',
        f'var pair = new {MIRROR}.SourceAndTarget("src", "dst");',
        f"var topics = new {MIRROR}.DefaultTopicFilter();",
        f"topics.configure(config.connectorBaseConfig(pair, {MIRROR}.MirrorSourceConnector.class));",
        f"var groups = new {MIRROR}.DefaultGroupFilter();",
        f"groups.configure(config.connectorBaseConfig(pair, {MIRROR}.MirrorCheckpointConnector.class));",
        f"for (var n : new String[]{{{_java_strings(TOPICS)}}}) "
        'if (topics.shouldReplicateTopic(n)) System.out.println("@topic " + n);',
        f"for (var n : new String[]{{{_java_strings(GROUPS)}}}) "
        'if (groups.shouldReplicateGroup(n)) System.out.println("@group " + n);',
    ])


# Every key MM2's own ConfigDefs define (connectors, filters, MirrorMakerConfig), printed by a Kafka's jars.
CONFIG_NAMES_SCRIPT = "\n".join([
    "var names = new java.util.TreeSet<String>();",
    "for (var name : new String[]{" + _java_strings(
        ["MirrorSourceConfig", "MirrorCheckpointConfig", "MirrorHeartbeatConfig", "MirrorMakerConfig",
         "DefaultTopicFilter$TopicFilterConfig", "DefaultGroupFilter$GroupFilterConfig",
         "DefaultConfigPropertyFilter$ConfigPropertyFilterConfig"]) + "}) {",
    f'  for (var field : Class.forName("{MIRROR}." + name).getDeclaredFields()) {{',
    "    if (java.lang.reflect.Modifier.isStatic(field.getModifiers())"
    " && field.getType() == org.apache.kafka.common.config.ConfigDef.class) {",
    "      field.setAccessible(true);",
    "      var def = (org.apache.kafka.common.config.ConfigDef) field.get(null);",
    "      if (def != null) names.addAll(def.names());",
    "    }",
    "  }",
    "}",
    'for (var n : names) System.out.println("@" + n);',
])
DEFAULT_EXCLUDES_SCRIPT = (f'System.out.println("@topics " + {MIRROR}.DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT);'
                           f'\nSystem.out.println("@groups " + {MIRROR}.DefaultGroupFilter.GROUPS_EXCLUDE_DEFAULT);')


@dataclass(frozen=True)
class KafkaAnswers:
    """What one Kafka's MM2 code answered, asked in one jshell (tests/tools/jshell.py says why)."""

    filters: dict[str, tuple[set[str], set[str]]]  # per legacy case: (topics, groups) its MM2 passes
    config_names: set[str]
    default_excludes: dict[str, list[str]]


def ask_kafka(classpath: str, legacy: dict[str, Path]) -> KafkaAnswers:
    scripts = {f"filters {i}": filters_script(path) for i, path in enumerate(legacy.values())}
    answers = ask(classpath, {**scripts, "config names": CONFIG_NAMES_SCRIPT, "defaults": DEFAULT_EXCLUDES_SCRIPT})
    filters = {}
    for case, name in zip(legacy, scripts, strict=True):
        lines = answers[name]
        filters[case] = ({line.split(" ", 1)[1] for line in lines if line.startswith("@topic ")},
                         {line.split(" ", 1)[1] for line in lines if line.startswith("@group ")})
    defaults = {kind[1:]: split_list(value) for kind, value in (line.split(" ", 1) for line in answers["defaults"])}
    return KafkaAnswers(filters, {line[1:] for line in answers["config names"]}, defaults)


@pytest.fixture(scope="module")
def legacy_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each case's legacy file, as the replication guides write them for Kafka 3.x."""
    root = tmp_path_factory.mktemp("legacy")
    files = {case: root / f"legacy-{i}.properties" for i, case in enumerate(CASES)}
    for case, path in files.items():
        path.write_text(HEAD + CASES[case])
    return files


@pytest.fixture(scope="module")
def kafka3(legacy_files: dict[str, Path]) -> KafkaAnswers:
    """Kafka 3.9.2's MM2 on every legacy file, its config keys and its default exclusions."""
    return ask_kafka(devstack_tools.kafka3().classpath, legacy_files)


@pytest.fixture(scope="module")
def kafka4() -> KafkaAnswers:
    """The pinned Kafka 4's config keys and default exclusions (its filters: the Java oracle's, below)."""
    return ask_kafka(devstack_tools.kafka().classpath, {})


def kafka4_filters(java_oracle, path: Path) -> tuple[set[str], set[str]]:
    """(topics, groups) the pinned Kafka 4's MM2 passes (its topic filter alone) for the file's one enabled pair."""
    [pair] = [p for p in java_oracle.mm2(path=path, topics=TOPICS, groups=GROUPS).pairs if p.enabled]
    assert pair.error is None, pair.error
    return set(pair.topic_filter or ()), set(pair.groups or ())


@pytest.mark.parametrize("case", CASES)
def test_generated_flow_excludes_what_the_legacy_mm2_excluded(java_oracle, kafka3, legacy_files, tmp_path, case):
    # import and generate through the CLI's main() in this process (as a process: tests/unit/test_importer.py)
    imported = run_in_process("import", str(legacy_files[case]), "--out", str(tmp_path / "repo"))
    assert imported.returncode == 0, imported.stderr
    generated = run_in_process("generate", str(tmp_path / "repo"), "--out", str(tmp_path / "out"))
    assert generated.returncode == 0, generated.stderr
    [flow_file] = (tmp_path / "out" / "mm2").glob("*.properties")

    legacy_topics, legacy_groups = kafka3.filters[case]
    flow_topics, flow_groups = kafka4_filters(java_oracle, flow_file)
    own_topics = java_list_matcher(split_list(TOPICS_EXCLUDE))
    own_groups = java_list_matcher(split_list(GROUPS_EXCLUDE))
    # what 3.x replicated, less what mm2gov always excludes; never more than 3.x did
    assert flow_topics == {t for t in legacy_topics if not own_topics(t)}, (case, legacy_topics, flow_topics)
    # groups: the imported flow's groups are the tenant's (`imported-.*`, as the legacy file says here)
    assert flow_groups == {g for g in legacy_groups if not own_groups(g)}, (case, legacy_groups, flow_groups)


def test_kafka_4_ignores_the_legacy_blacklists(java_oracle, kafka3, legacy_files):
    """Why import translates them: the 4.x MM2 given the legacy file as is replicates what 3.x excluded."""
    case = "top-level blacklists"
    legacy_topics, legacy_groups = kafka3.filters[case]
    as_is_topics, as_is_groups = kafka4_filters(java_oracle, legacy_files[case])
    assert {"pay.secret.keys", "pay.secrets", "pay.tmp.1"} <= as_is_topics - legacy_topics
    assert "imported-test-1" in as_is_groups - legacy_groups


def test_import_knows_every_mm2_key_kafka_4_removed(kafka3, kafka4):
    """The keys 3.9's MM2 defines and 4.x's does not are the blacklists import translates and the ones it
    explains (REMOVED_IN_KAFKA_4); a key removed by a later 4.x would fail this until import knows it."""
    removed = kafka3.config_names - kafka4.config_names
    translated = {"topics.blacklist", "groups.blacklist", "config.properties.blacklist"}
    assert removed == translated | set(REMOVED_IN_KAFKA_4), removed


def test_mm2govs_own_exclusions_hold_kafkas_defaults(kafka3, kafka4):
    """GROUPS_EXCLUDE is MM2's default groups.exclude in 3.9 and 4.x alike (a flow's groups.exclude starts with it),
    and TOPICS_EXCLUDE starts with 3.x's default topics.exclude, which 4.x narrowed."""
    old, new = kafka3.default_excludes, kafka4.default_excludes
    assert old["groups"] == new["groups"] == split_list(GROUPS_EXCLUDE)
    assert split_list(TOPICS_EXCLUDE)[:3] == old["topics"] != new["topics"], (old, new)
