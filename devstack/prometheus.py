"""A real Prometheus and a real Alertmanager on loopback, for the monitoring tests.

Prometheus scrapes the given targets (each flow's MM2 JMX exporter), evaluates the given rule files
(what `mm2gov generate` writes) and sends alerts to an Alertmanager; Alertmanager routes them with a
given configuration (the generated routes). Both keep their data in the run directory, listen on
127.0.0.1 only (Alertmanager's cluster listener is off), are stopped by PID, and are retried on another
free port when one is taken between choosing and binding it. Intervals are short for tests: scrape and
evaluation every second, alerts resent every second, Alertmanager's group timings a second.

    with Prometheus(run_dir, targets=[ScrapeTarget("mm2-x", mm2.metrics_url)], rule_files=[rules]) as prom:
        prom.query('up{job="mm2-x"}')

Used by tests and bench only (like the rest of `devstack`).
"""

from __future__ import annotations

import json
import os
import signal
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from devstack import tools
from devstack.files import write_public
from devstack.process import LOOPBACK, DevstackError, ManagedProcess, start_on_free_port, tail
from governance.files import YAML_DUMPER

INTERVAL = "1s"  # rule evaluation, alert resend, Alertmanager grouping: short for tests
# Scrape interval and timeout: a JMX exporter's scrape on a loaded machine took over 1 s for a minute on end (CI,
# 2026-11-28), every failed scrape marks the flow's series stale, and a shortened MM2FlowDown paged a healthy flow.
SCRAPE_INTERVAL = "2s"


@dataclass(frozen=True)
class ScrapeTarget:
    """One scrape job: `job` names it (the `job` label), `url` is the full /metrics URL."""

    job: str
    url: str


@dataclass(frozen=True)
class Sample:
    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class RuleHealth:
    group: str
    name: str
    health: str  # "ok", "err" or "unknown" (not evaluated yet)
    last_error: str


@dataclass(frozen=True)
class PromAlert:
    """An alert as Prometheus holds it (pending or firing)."""

    labels: dict[str, str]
    state: str


@dataclass(frozen=True)
class RoutedAlert:
    """An alert as Alertmanager holds it, with the receivers its routes chose."""

    labels: dict[str, str]
    state: str  # "active", "suppressed", "unprocessed"
    receivers: tuple[str, ...]


def _get_json(url: str, timeout: float = 10) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


def _ready(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return response.status == 200


def _start_on_free_port(name: str, home: Path, argv_for: Callable[[int], list[str]], port: int,
                        timeout: float) -> tuple[ManagedProcess, int]:
    """Start a Go server listening on `port` (0: a free one, chosen again if taken before it binds)."""
    return start_on_free_port(
        lambda chosen: ManagedProcess(name=name, argv=argv_for(chosen), log_path=home / f"{name}.log", cwd=home),
        lambda chosen: _ready(f"http://{LOOPBACK}:{chosen}/-/ready"), timeout, "GET /-/ready", port)


@dataclass
class Alertmanager:
    """Alertmanager with `config` (an Alertmanager configuration, e.g. the generated routes)."""

    run_dir: Path
    config: dict[str, Any]
    port: int = 0
    process: ManagedProcess | None = None

    @property
    def home(self) -> Path:
        return self.run_dir / "alertmanager"

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self, timeout: float = 60) -> Alertmanager:
        binary = tools.alertmanager()
        config = self.home / "alertmanager.yml"
        write_public(config, yaml.dump(short_timings(self.config), Dumper=YAML_DUMPER, sort_keys=False).encode())
        self.process, self.port = _start_on_free_port("alertmanager", self.home, lambda port: [
            str(binary), f"--config.file={config}", f"--storage.path={self.home / 'data'}",
            f"--web.listen-address={LOOPBACK}:{port}", "--cluster.listen-address=", "--log.level=info",
        ], self.port, timeout)
        return self

    def alerts(self) -> list[RoutedAlert]:
        """GET /api/v2/alerts: every alert Alertmanager holds and the receivers it routed each to."""
        return [RoutedAlert(a["labels"], a["status"]["state"], tuple(sorted(r["name"] for r in a["receivers"])))
                for a in _get_json(f"{self.url}/api/v2/alerts")]

    def stop(self) -> None:
        if self.process:
            self.process.stop()

    def __enter__(self) -> Alertmanager:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def short_timings(config: dict[str, Any]) -> dict[str, Any]:
    """`config` with the top route's grouping timings at a second (notify at once, again a second after a change)."""
    route = {**config.get("route", {}), "group_wait": INTERVAL, "group_interval": INTERVAL, "repeat_interval": "1h"}
    return {**config, "route": route}


@dataclass
class Prometheus:
    """Prometheus scraping `targets`, evaluating `rule_files`, alerting `alertmanager_url` (if given)."""

    run_dir: Path
    targets: list[ScrapeTarget] = field(default_factory=list)
    rule_files: list[Path] = field(default_factory=list)
    alertmanager_url: str | None = None
    port: int = 0
    process: ManagedProcess | None = None

    @property
    def home(self) -> Path:
        return self.run_dir / "prometheus"

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def config(self) -> dict[str, Any]:
        scrape = []
        for target in self.targets:
            parts = urllib.parse.urlsplit(target.url)
            scrape.append({"job_name": target.job, "scheme": parts.scheme, "metrics_path": parts.path or "/metrics",
                           "scrape_interval": SCRAPE_INTERVAL, "scrape_timeout": SCRAPE_INTERVAL,
                           "static_configs": [{"targets": [parts.netloc]}]})
        config: dict[str, Any] = {
            "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": INTERVAL},
            "rule_files": [str(path.resolve()) for path in self.rule_files],
            "scrape_configs": scrape,
        }
        if self.alertmanager_url:
            config["alerting"] = {"alertmanagers": [{"static_configs": [
                {"targets": [urllib.parse.urlsplit(self.alertmanager_url).netloc]}]}]}
        return config

    def start(self, timeout: float = 60) -> Prometheus:
        binary = tools.prometheus()
        config = self.home / "prometheus.yml"
        write_public(config, yaml.dump(self.config(), Dumper=YAML_DUMPER, sort_keys=False).encode())
        self.process, self.port = _start_on_free_port("prometheus", self.home, lambda port: [
            str(binary), f"--config.file={config}", f"--storage.tsdb.path={self.home / 'data'}",
            f"--web.listen-address={LOOPBACK}:{port}", f"--rules.alert.resend-delay={INTERVAL}",
            "--log.level=info",
        ], self.port, timeout)
        return self

    def reload(self, targets: list[ScrapeTarget], timeout: float = 30) -> None:
        """Scrape `targets` from now on (SIGHUP: Prometheus reloads its configuration file; rules and alerts stay)."""
        assert self.process and self.process.pid, "prometheus is not running"
        self.targets = list(targets)
        write_public(self.home / "prometheus.yml",
                     yaml.dump(self.config(), Dumper=YAML_DUMPER, sort_keys=False).encode())
        os.kill(self.process.pid, signal.SIGHUP)
        wanted = {t.url for t in targets}
        self.process.wait_ready(lambda: self.scrape_urls() == wanted, timeout, f"scrape targets {sorted(wanted)}")

    def scrape_urls(self) -> set[str]:
        """The URLs of the active scrape targets (GET /api/v1/targets)."""
        return {t["scrapeUrl"] for t in self._api("targets", state="active")["activeTargets"]}

    def _api(self, path: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        body = _get_json(f"{self.url}/api/v1/{path}{query}")
        if body.get("status") != "success":
            raise DevstackError(f"prometheus: {path} failed: {body.get('error')}")
        return body["data"]

    def query(self, expr: str, at: float | None = None) -> list[Sample]:
        """An instant vector query: one Sample per series; evaluated now, or at the Unix time `at`."""
        data = self._api("query", query=expr, **({"time": f"{at:.3f}"} if at is not None else {}))
        if data["resultType"] != "vector":
            raise DevstackError(f"prometheus: {expr!r} is a {data['resultType']}, not an instant vector")
        return [Sample(r["metric"], float(r["value"][1])) for r in data["result"]]

    def rules(self) -> list[RuleHealth]:
        return [RuleHealth(g["name"], r["name"], r["health"], r.get("lastError", ""))
                for g in self._api("rules")["groups"] for r in g["rules"]]

    def alerts(self) -> list[PromAlert]:
        return [PromAlert(a["labels"], a["state"]) for a in self._api("alerts")["alerts"]]

    def log_tail(self) -> str:
        return tail(self.home / "prometheus.log")

    def stop(self) -> None:
        if self.process:
            self.process.stop()

    def __enter__(self) -> Prometheus:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
