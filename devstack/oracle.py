"""The other side's code as the oracle: ask Kafka's own classes what MirrorMaker 2 makes of a config.

`JavaOracle` runs the Java program of `oracle/` (built into the cache by `make setup`,
install/oracle.sh) once, as `java -cp '<oracle jar>:<replication policy jar>:<kafka libs>/*'
io.mm2gov.oracle.Oracle`, and talks to it over pipes: one JSON request per line in, one JSON
answer per line out, in order. Thousands of questions cost milliseconds each, not a JVM start each.

Requests (every one may carry an "id", copied into its answer) and answers:

- `{"op": "ping"}` -> `{"pong": true, "kafka_version": "4.3.1"}`
- `{"op": "properties", "text": "...", "as": "file"|"reader"}` or `{"op": "properties", "path": "..."}`
  -> `{"properties": {key: value|null}, "redacted": [key, ...]}`. What `Utils.loadProps` /
  `java.util.Properties.load` reads: a path as MirrorMaker reads its file (ISO-8859-1, `\\uXXXX`,
  continuations); text "as file" (default) as if saved as UTF-8 and read so; "as reader" as characters.
  Values of secret-looking keys (password, jaas, secret, token, credential, ...) come back null.
- `{"op": "list", "value": "a, b ,c"}` -> `{"items": [...], "filter_items": [...]|null, "filter_error":
  null|"...", "validate_errors": [...]}`: the items of Kafka's LIST type (`ConfigDef.parseType`), then
  the value through DefaultTopicFilter's own definition of `topics` (LIST with
  `ValidList.anyNonDuplicateValues(true, false)`, as `topics.exclude`/`groups`/`groups.exclude` in
  Kafka 4.x): what `ConfigDef.parse` gives the filter (duplicates dropped; an empty item is an error)
  and what `ConfigDef.validate`, i.e. `Connector.validate` before the herder creates a connector, says
  (duplicates are an error there).
- `{"op": "regex", "kind": "topic"|"group", "include": LIST, "exclude": LIST|null, "names": [...]}`
  -> `{"matches": [...]}`: the names a real, configured `DefaultTopicFilter` (`topics`,
  `topics.exclude`) or `DefaultGroupFilter` (`groups`, `groups.exclude`) passes; exclude null or
  absent means MM2's default exclude. A bad regex is an error with Java's message.
- `{"op": "mm2", "text"|"path": ..., "topics": [...], "groups": [...]}` -> `{"clusters", "dropped_keys",
  "pairs": [...]}`: per herder of `MirrorMakerConfig.clusterPairs()`, whether the flow is enabled,
  which topics `MirrorSourceConnector.shouldReplicateTopic` replicates (and the topic filter alone
  passes, and their remote names), which groups the checkpoint connector's group filter syncs, the
  connectors' own validation errors, the settings a security reviewer cares about, the effective
  clients (where and as whom they connect; secrets only as unset/reference/inline/set) and the raw
  client overrides for the pair. Config providers are not resolved: `config.providers*` keys are
  dropped (listed in dropped_keys), `${...}` references stay verbatim.
- a request that fails: `{"error": "<Java's message>", "exception": "<Java class>"}`; raised here as
  `OracleError`, the process goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from devstack import tools
from devstack.process import stop_pid, tail
from governance.errors import RuntimeFailure

ORACLE_SOURCES = Path(__file__).resolve().parents[1] / "oracle"
MAIN_CLASS = "io.mm2gov.oracle.Oracle"
JAR_NAME = "mm2gov-oracle.jar"
Kind = Literal["topic", "group"]


class OracleError(RuntimeFailure):
    """The oracle answered a request with an error (Java's message), or its process died."""

    def __init__(self, message: str, exception: str | None = None) -> None:
        super().__init__(message)
        self.exception = exception


def sources_key(kafka_version: str) -> str:
    """The cache key install/oracle.sh uses for the oracle's sources and this Kafka version (tools.sources_key)."""
    return tools.sources_key(ORACLE_SOURCES, kafka_version)


def oracle_jar() -> Path:
    """The oracle built from these sources for the pinned Kafka; MissingTool with the remedy otherwise."""
    version = tools.versions()["KAFKA_VERSION"]
    home = tools.cache_dir() / f"oracle-{sources_key(version)}"
    if not (home / ".complete").is_file():
        raise tools.MissingTool(
            f"the Java oracle for these sources and Kafka {version} is not built in {home}: "
            f"run `make setup` (or {tools.INSTALL_DIR / 'oracle.sh'})"
        )
    return home / JAR_NAME


@dataclass(frozen=True)
class PropertiesAnswer:
    properties: dict[str, str | None]  # secret-looking keys map to None
    redacted: tuple[str, ...]


@dataclass(frozen=True)
class ListAnswer:
    items: tuple[str, ...]  # ConfigDef.parseType(LIST)
    filter_items: tuple[str, ...] | None  # what MM2's filter gets (duplicates dropped); None if rejected
    filter_error: str | None  # why the filter rejects the value (an empty item)
    validate_errors: tuple[str, ...]  # what Connector.validate says (duplicates too): the connector is not created


@dataclass(frozen=True)
class ClientSettings:
    """Where and as whom one MM2 client connects; secrets only as unset/reference/inline/set."""

    bootstrap_servers: str | None
    security_protocol: str
    sasl_mechanism: str | None
    sasl_jaas_config: str
    secrets: dict[str, str]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientSettings:
        return cls(data["bootstrap.servers"], data["security.protocol"], data["sasl.mechanism"],
                   data["sasl.jaas.config"], dict(data["secrets"]))


@dataclass(frozen=True)
class Mm2Pair:
    """One herder (source->target) of a dedicated MM2, as Kafka's classes configure it."""

    source: str
    target: str
    enabled: bool = False
    topics: tuple[str, ...] | None = None  # what MirrorSourceConnector.shouldReplicateTopic passes
    topic_filter: tuple[str, ...] | None = None  # what topic.filter.class alone passes
    remote_topics: dict[str, str] | None = None  # source topic -> its name on the target
    groups: tuple[str, ...] | None = None  # what the checkpoint connector's group filter passes
    connector_errors: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    clients: dict[str, ClientSettings] = field(default_factory=dict)
    overrides: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # Kafka rejected this pair's connector config

    @property
    def source_client(self) -> ClientSettings:
        """The consumer that reads the replicated records from the source."""
        return self.clients["source_consumer"]

    @property
    def target_client(self) -> ClientSettings:
        """The Connect worker's producer that writes them to the target (with producer.override.*)."""
        return self.clients["worker_producer"]

    def connector_runs(self, connector: str) -> bool:
        """Whether Connector.validate lets the herder create this connector (e.g. 'MirrorCheckpointConnector')."""
        return self.error is None and not self.connector_errors.get(connector)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Mm2Pair:
        if "error" in data:
            return cls(data["source"], data["target"], error=data["error"])
        optional = {key: None if data[key] is None else tuple(data[key])
                    for key in ("topics", "topic_filter", "groups")}
        return cls(
            data["source"], data["target"], data["enabled"], optional["topics"], optional["topic_filter"],
            data["remote_topics"], optional["groups"], data["connector_errors"], data["settings"],
            {name: ClientSettings.from_json(client) for name, client in data["clients"].items()}, data["overrides"],
        )


@dataclass(frozen=True)
class Mm2Answer:
    clusters: tuple[str, ...]
    dropped_keys: tuple[str, ...]  # config provider keys the oracle did not hand to Kafka
    pairs: tuple[Mm2Pair, ...]

    def pair(self, source: str, target: str) -> Mm2Pair:
        for pair in self.pairs:
            if (pair.source, pair.target) == (source, target):
                return pair
        raise KeyError(f"{source}->{target} is not a herder of this MM2 (pairs: "
                       f"{', '.join(f'{p.source}->{p.target}' for p in self.pairs) or 'none'})")

    @property
    def enabled_pairs(self) -> tuple[Mm2Pair, ...]:
        return tuple(pair for pair in self.pairs if pair.enabled)


class JavaOracle:
    """One long-running oracle process; use as a context manager (it is stopped by PID on exit)."""

    def __init__(self, jar: Path | None = None, heap: str = "256m") -> None:
        jar = jar or oracle_jar()
        # the flow's replication policy (replication-policy/) too: generated files name it, as MM2 does
        classpath = f"{jar}:{tools.replication_policy_jar()}:{tools.kafka().classpath}"
        descriptor, log_name = tempfile.mkstemp(prefix="mm2gov-oracle-", suffix=".log")
        os.close(descriptor)
        self._log = Path(log_name)
        self._lock = threading.Lock()
        with open(self._log, "wb") as log:
            self._process = subprocess.Popen(
                [str(tools.java()), f"-Xmx{heap}", "-XX:+UseSerialGC", "-cp", classpath, MAIN_CLASS],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                start_new_session=True,  # its own process group, stopped by PID
            )
        try:
            self.kafka_version = str(self.request({"op": "ping"})["kafka_version"])
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        return self._process.pid

    def __enter__(self) -> JavaOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End of input ends the Java loop; the process group is stopped by PID if it lingers."""
        if self._process.stdin and not self._process.stdin.closed:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            stop_pid(self._process.pid, timeout=5)
            self._process.wait(timeout=5)
        if self._process.stdout:
            self._process.stdout.close()
        self._log.unlink(missing_ok=True)

    # -- protocol -------------------------------------------------------------------------------

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One request, one answer; OracleError if the answer is an error."""
        return self.requests([payload])[0]

    def requests(self, payloads: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Many requests pipelined: written by a thread while the answers are read, so no pipe fills up."""
        lines = [json.dumps(payload) + "\n" for payload in payloads]
        with self._lock:
            stdin, stdout = self._process.stdin, self._process.stdout
            assert stdin is not None and stdout is not None
            failure: list[BaseException] = []

            def write() -> None:
                try:
                    for line in lines:
                        stdin.write(line.encode())
                    stdin.flush()
                except (OSError, ValueError) as exc:
                    failure.append(exc)

            writer = threading.Thread(target=write, name="oracle-writer", daemon=True)
            writer.start()
            answers = []
            for _ in lines:
                raw = stdout.readline()
                if not raw:
                    writer.join(timeout=1)
                    raise OracleError(f"the Java oracle (pid {self._process.pid}) stopped answering "
                                      f"(exit code {self._process.poll()}); its stderr:\n{tail(self._log)}")
                answers.append(json.loads(raw))
            writer.join()
            if failure:
                raise OracleError(f"cannot write to the Java oracle: {failure[0]}")
        for answer in answers:
            if "error" in answer:
                raise OracleError(answer["error"], answer.get("exception"))
        return answers

    # -- typed questions -----------------------------------------------------------------------

    def properties(self, text: str | None = None, *, path: Path | str | None = None,
                   as_: Literal["file", "reader"] = "file") -> PropertiesAnswer:
        """The key/value map MM2 reads from a properties file (a path, or text saved as UTF-8)."""
        answer = self.request(_source(text, path, as_) | {"op": "properties"})
        return PropertiesAnswer(answer["properties"], tuple(answer["redacted"]))

    def list_items(self, value: str) -> ListAnswer:
        """`value` parsed as Kafka's LIST config type."""
        answer = self.request({"op": "list", "value": value})
        filter_items = None if answer["filter_items"] is None else tuple(answer["filter_items"])
        return ListAnswer(tuple(answer["items"]), filter_items, answer["filter_error"],
                          tuple(answer["validate_errors"]))

    def matches(self, list_value: str, names: Sequence[str], kind: Kind = "topic",
                exclude: str | None = "") -> list[str]:
        """The names MM2's default filter passes for `topics`/`groups` = list_value.

        exclude "" (default): nothing excluded, so the answer is the list alone; None: MM2's default exclude.
        """
        return self.matches_many([(list_value, names)], kind, exclude)[0]

    def matches_many(self, queries: Sequence[tuple[str, Sequence[str]]], kind: Kind = "topic",
                     exclude: str | None = "") -> list[list[str]]:
        """`matches` for many (list_value, names) at once, pipelined."""
        answers = self.requests(
            {"op": "regex", "kind": kind, "include": include, "exclude": exclude, "names": list(names)}
            for include, names in queries
        )
        return [answer["matches"] for answer in answers]

    def regex_work(self, queries: Sequence[tuple[str, Sequence[str]]]) -> list[list[tuple[bool, int]]]:
        """Per (regex, names): whether Java's Pattern matches each whole name, and how many times its
        engine read a character of the name doing so (the matcher's work; pipelined)."""
        answers = self.requests({"op": "regex_work", "regex": regex, "names": list(names)}
                                for regex, names in queries)
        return [list(zip(answer["matches"], answer["reads"], strict=True)) for answer in answers]

    def mm2(self, text: str | None = None, topics: Sequence[str] = (), groups: Sequence[str] = (), *,
            path: Path | str | None = None) -> Mm2Answer:
        """What a dedicated MM2 started with this file replicates, per cluster pair."""
        request = {"op": "mm2", "topics": list(topics), "groups": list(groups)}
        answer = self.request(_source(text, path, "file") | request)
        return Mm2Answer(tuple(answer["clusters"]), tuple(answer["dropped_keys"]),
                         tuple(Mm2Pair.from_json(pair) for pair in answer["pairs"]))


def _source(text: str | None, path: Path | str | None, as_: str) -> dict[str, Any]:
    if (text is None) == (path is None):
        raise ValueError("give either text or path")
    return {"path": str(path)} if path is not None else {"text": text, "as": as_}

