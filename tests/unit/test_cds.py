"""The stack's JVMs share their classes through an archive per main class and classpath (devstack/cds.py): the
JVM itself says where it loaded a class from."""

from __future__ import annotations

import signal
import subprocess

import pytest

from devstack import tools
from devstack.cds import ClassArchive

MAIN = "kafka.tools.StorageTool"


@pytest.fixture
def kafka(tmp_path, monkeypatch):
    """Kafka's classpath and the JDK, found in the tools cache; then archives in a cache of the test's own."""
    classpath, java = tools.kafka().classpath, tools.java()
    monkeypatch.setenv("MM2GOV_CACHE", str(tmp_path))
    monkeypatch.setattr(tools, "java", lambda: java)
    return classpath, java


def run(kafka: tuple[str, object], archive: ClassArchive, *extra: str) -> subprocess.CompletedProcess[str]:
    classpath, java = kafka
    argv = [str(java), *archive.options(), *extra, "-cp", classpath, MAIN, "--help"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_the_first_clean_exit_writes_the_archive_and_the_next_jvm_loads_its_classes_from_it(kafka):
    first = ClassArchive.of(kafka[0], MAIN, ())
    done = run(kafka, first)
    assert done.returncode == 0 and "usage" in done.stdout.lower()
    assert first.part.is_file() and not first.path.exists()
    first.keep(done.returncode)
    assert first.path.is_file() and not first.part.exists()

    second = ClassArchive.of(kafka[0], MAIN, ())
    assert second.path == first.path  # same main class, classpath and options: the same archive
    loaded = run(kafka, second, "-Xlog:class+load=info")
    assert loaded.returncode == 0
    assert f"{MAIN} source: shared objects file (top)" in loaded.stdout  # from the archive, not the jar
    assert "warning" not in (loaded.stdout + loaded.stderr).lower()
    assert not second.part.exists()  # nothing written when the archive was there


def test_another_main_class_or_option_has_an_archive_of_its_own(kafka):
    classpath = kafka[0]
    paths = {ClassArchive.of(classpath, MAIN, ()).path, ClassArchive.of(classpath, "kafka.Kafka", ()).path,
             ClassArchive.of(classpath, MAIN, ("-XX:+UseSerialGC",)).path}
    assert len(paths) == 3


@pytest.mark.parametrize("code", [-signal.SIGKILL, None])
def test_a_dump_cut_short_is_removed_never_kept(kafka, code):
    archive = ClassArchive.of(kafka[0], MAIN, ())
    archive.options()
    archive.part.write_bytes(b"half a dump")  # as a JVM killed while writing it leaves it
    archive.keep(code)
    assert not archive.part.exists() and not archive.path.exists()


def test_a_later_dump_never_replaces_the_archive(kafka):
    archive = ClassArchive.of(kafka[0], MAIN, ())
    archive.path.parent.mkdir(parents=True)
    archive.path.write_bytes(b"the archive")
    archive.part.write_bytes(b"another JVM's dump")
    archive.keep(143)
    assert archive.path.read_bytes() == b"the archive" and not archive.part.exists()


def test_a_cache_that_cannot_hold_an_archive_starts_the_jvm_without_one(kafka, tmp_path, monkeypatch):
    (tmp_path / "cds").write_text("a file where the folder would be")  # mkdir fails as on a read-only cache
    archive = ClassArchive.of(kafka[0], MAIN, ())
    assert archive.options() == []
    done = run(kafka, archive)
    assert done.returncode == 0 and "usage" in done.stdout.lower()
    archive.keep(done.returncode)  # nothing to keep, nothing raised
