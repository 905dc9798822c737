"""What `make setup` fetches besides the Python lock is pinned and checked too: the Maven jars against the
sha256 lists under install/checksums/ (verify-jars.sh), kube-apiserver's Go modules against the committed
go.mod and go.sum (`-mod=readonly`), etcd at a Debian version, Chromium above a floor. These tests run the
install scripts' own checks on scratch folders, and ask that the pins name the versions versions.env and
uv.lock hold, so that moving a version without `make lock` fails here rather than on a fresh machine."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from devstack.tools import (
    INSTALL_DIR,
    cache_dir,
    jmx_exporter_agent,
    kafka,
    kafka3,
    legacy_mm2,
    mm2_boundary_versions,
    versions,
)
from governance.tools import pyspark_version

ROOT = Path(__file__).resolve().parents[2]
CHECKSUMS = INSTALL_DIR / "checksums"
VERIFY = INSTALL_DIR / "verify-jars.sh"


def _verify(listing: Path, folder: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(VERIFY), str(listing), str(folder)], capture_output=True, text=True,
                          env={**os.environ, "MM2GOV_RELOCK": "", **env}, timeout=60)


@pytest.fixture
def fetched(tmp_path: Path) -> tuple[Path, Path]:
    """A folder of two jars and the list `make lock` writes for it."""
    folder = tmp_path / "libs"
    folder.mkdir()
    (folder / "a-1.0.jar").write_bytes(b"PK\x03\x04 a")
    (folder / "b-2.0.jar").write_bytes(b"PK\x03\x04 b")
    (folder / ".complete").write_text("")  # not a jar: not listed
    listing = tmp_path / "libs.sha256"
    locked = _verify(listing, folder, MM2GOV_RELOCK="1")
    assert locked.returncode == 0, locked.stderr
    return listing, folder


def test_relock_lists_every_jar_with_its_sha256(fetched: tuple[Path, Path]) -> None:
    listing, folder = fetched
    lines = listing.read_text().splitlines()
    assert [line.split("  ")[1] for line in lines] == ["a-1.0.jar", "b-2.0.jar"]
    assert all(re.fullmatch(r"[0-9a-f]{64}  \S+\.jar", line) for line in lines)
    ok = _verify(listing, folder)
    assert ok.returncode == 0 and "2 jars verified" in ok.stdout


@pytest.mark.parametrize("change", ["altered", "added", "missing"])
def test_jars_other_than_the_locked_ones_are_refused(fetched: tuple[Path, Path], change: str) -> None:
    listing, folder = fetched
    if change == "altered":
        (folder / "b-2.0.jar").write_bytes(b"PK\x03\x04 b, served differently")
    elif change == "added":
        (folder / "c-3.0.jar").write_bytes(b"PK\x03\x04 c")
    else:
        (folder / "a-1.0.jar").unlink()
    refused = _verify(listing, folder)
    assert refused.returncode == 1
    assert "are not those libs.sha256 pins" in refused.stderr
    named = {"altered": "b-2.0.jar", "added": "c-3.0.jar", "missing": "a-1.0.jar"}[change]
    assert named in refused.stderr and "Traceback" not in refused.stderr


def test_no_list_is_refused_not_trusted(fetched: tuple[Path, Path], tmp_path: Path) -> None:
    _, folder = fetched
    refused = _verify(tmp_path / "none.sha256", folder)
    assert refused.returncode == 1 and "run 'make lock'" in refused.stderr


def _names(listing: str) -> set[str]:
    return {line.split("  ")[1] for line in (CHECKSUMS / listing).read_text().splitlines()}


def test_the_lists_name_the_pinned_versions() -> None:
    """A version moved in versions.env or uv.lock without `make lock` leaves a list naming the old one."""
    pinned = versions()
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    [pyspark] = [p["version"] for p in lock["package"] if p["name"] == "pyspark"]
    assert {f"kafka_2.13-{pinned['KAFKA_VERSION']}.jar", f"connect-mirror-{pinned['KAFKA_VERSION']}.jar"} <= _names(
        "kafka.sha256")
    assert {f"kafka_2.13-{pinned['KAFKA3_VERSION']}.jar", f"connect-mirror-{pinned['KAFKA3_VERSION']}.jar"} <= _names(
        "kafka3.sha256")
    assert _names("jmx-exporter.sha256") == {f"jmx_prometheus_javaagent-{pinned['JMX_EXPORTER_VERSION']}.jar"}
    assert f"spark-sql-kafka-0-10_2.13-{pyspark}.jar" in _names("spark-kafka.sha256")
    assert {f"api-{pinned['STRIMZI_VERSION']}.jar", f"crd-generator-{pinned['STRIMZI_VERSION']}.jar"} <= _names(
        "strimzi-crds.sha256")
    for version in mm2_boundary_versions():  # MM2 only, logging through log4j2 as the other processes
        names = _names(f"legacy-mm2-{version}.sha256")
        assert {f"connect-mirror-{version}.jar", f"connect-runtime-{version}.jar"} <= names
        elsewhere = r"(kafka_2\.13|log4j|reload4j|slf4j-log4j12|slf4j-reload4j)-[\d.]+\.jar"  # a broker, log4j 1
        assert not {n for n in names if re.fullmatch(elsewhere, n)}, names


def test_the_jars_the_suite_runs_on_are_the_locked_ones() -> None:
    """The cache `make setup` filled (and every test runs from) passes the same check a fresh fetch does."""
    spark_kafka = cache_dir() / f"spark-kafka-{pyspark_version()}"
    for listing, folder in [("kafka.sha256", kafka().libs), ("kafka3.sha256", kafka3().libs),
                            ("jmx-exporter.sha256", jmx_exporter_agent().parent),
                            ("spark-kafka.sha256", spark_kafka),
                            *[(f"legacy-mm2-{v}.sha256", legacy_mm2(v).libs) for v in mm2_boundary_versions()]]:
        checked = _verify(CHECKSUMS / listing, folder)
        assert checked.returncode == 0, checked.stderr


def test_every_maven_fetch_names_the_pinned_dependency_plugin() -> None:
    """`mvn dependency:...` resolves the plugin's version from Maven's own release; the scripts name it."""
    version = versions()["MAVEN_DEPENDENCY_PLUGIN_VERSION"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    goals = []
    for script in sorted(INSTALL_DIR.glob("*.sh")):
        text = script.read_text()
        goals += re.findall(r'"([^"\s]+):(?:copy|copy-dependencies)"', text)
        assert not re.search(r"(?<![\w:$-])dependency:copy", text), f"{script.name}: a Maven goal without its version"
    assert len(goals) == 6  # kafka (libs, agent), kafka3, legacy-mm2, spark-kafka, strimzi-crds
    named = "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION"
    assert set(goals) <= {named, "$DEPENDENCY_PLUGIN"}
    assert f'DEPENDENCY_PLUGIN="{named}"' in (INSTALL_DIR / "kafka.sh").read_text()


def test_kube_apiserver_builds_from_the_committed_module_graph(tmp_path: Path) -> None:
    """go.mod requires the release versions.env names, its staging modules at the same v0.X.Y, and Go itself
    finds every package of kube-apiserver in that graph with go.sum complete (`-mod=readonly` changes nothing)."""
    k8s = versions()["K8S_VERSION"]
    locked = INSTALL_DIR / "kube_apiserver"
    gomod = (locked / "go.mod").read_text()
    assert f"require k8s.io/kubernetes {k8s}" in gomod.splitlines()
    replaces = re.findall(r"^replace (k8s\.io/\S+) => (\S+) (\S+)$", gomod, re.M)
    assert len(replaces) > 20 and all(a == b and v == f"v0.{k8s.removeprefix('v1.')}" for a, b, v in replaces)
    assert f"k8s.io/kubernetes {k8s} h1:" in (locked / "go.sum").read_text()
    for name in ("go.mod", "go.sum", "tools.go"):
        (tmp_path / name).write_bytes((locked / name).read_bytes())
    listed = subprocess.run(["go", "list", "-mod=readonly", "-deps", "k8s.io/kubernetes/cmd/kube-apiserver"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"})
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "k8s.io/kubernetes/cmd/kube-apiserver" in listed.stdout.split()
    assert (tmp_path / "go.mod").read_bytes() == (locked / "go.mod").read_bytes()


def _fake_etcd(tmp_path: Path, version: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    etcd = bin_dir / "etcd"
    etcd.write_text(f"#!/bin/sh\necho 'etcd Version: {version}'\n")
    etcd.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_an_etcd_of_another_version_is_refused(tmp_path: Path) -> None:
    """A fake etcd on PATH: the one way to put another version in front of the script without root."""
    refused = subprocess.run(["bash", str(INSTALL_DIR / "etcd.sh")], capture_output=True, text=True,
                             env=_fake_etcd(tmp_path, "3.5.99"), timeout=60)
    assert refused.returncode == 1
    upstream = versions()["ETCD_DEB_VERSION"].split("-")[0]
    assert f"is etcd 3.5.99; the stack is tested with etcd {upstream}" in refused.stderr


def test_the_etcd_and_chromium_this_machine_runs_meet_the_pins() -> None:
    for script in ("etcd.sh", "chromium.sh"):
        checked = subprocess.run(["bash", str(INSTALL_DIR / script)], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stderr
    assert f"etcd {versions()['ETCD_DEB_VERSION'].split('-')[0]}:" in subprocess.run(
        ["bash", str(INSTALL_DIR / "etcd.sh")], capture_output=True, text=True, timeout=60).stdout
