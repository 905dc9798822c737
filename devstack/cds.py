"""Class-data sharing for the local stack's JVMs: a broker's or MM2's classes parsed and verified once, then
mapped by every later JVM that runs the same main class on the same classpath (Java's AppCDS, a dynamic
archive). Measured here (2026-11-29): a broker ready on 1.6 CPU-s instead of 2.8, Kafka's storage format on
0.6 instead of 1.0; the suite starts brokers and MM2s by the dozen.

The archive lives in the tools cache (cds/), named after everything it depends on: the Java build, the main
class, the JVM options given and every jar of the classpath (path, size, modification time), so a changed jar
or JDK gets a new archive, never a stale one. The first JVM without one writes it as it exits
(`-XX:ArchiveClassesAtExit`) under a name of its own; it becomes the archive (an atomic rename) only after
that JVM ended by itself or by SIGTERM, never after a SIGKILL that may have cut the dump short. The JVM checks
an archive against its own classpath and build and runs without it on any mismatch (`-Xshare:auto`, its
default): an archive makes a start cheaper, never different. Its log lines are off (`-Xlog:cds*=off`: the
dump notes every class it leaves out), so the programs' logs are what they were.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from devstack import tools

QUIET = "-Xlog:cds*=off"
STALE_SECONDS = 600  # a dump takes seconds; an unclaimed one this old is from a JVM that was killed


@dataclass(frozen=True)
class ClassArchive:
    """The archive of one main class on one classpath, and what this launch writes while there is none."""

    path: Path
    part: Path

    @classmethod
    def of(cls, classpath: str, main_class: str, jvm_options: tuple[str, ...] | list[str]) -> ClassArchive:
        folder = tools.cache_dir() / "cds"
        key = hashlib.sha256("\n".join([_stat(tools.java().resolve()), main_class, *jvm_options,
                                        *(_stat(jar) for jar in _jars(classpath))]).encode()).hexdigest()[:24]
        return cls(folder / f"{key}.jsa", folder / f"{key}.{uuid.uuid4().hex}.part")

    def options(self) -> list[str]:
        """The JVM options of a launch: map the archive, or write it at exit when there is none yet; none when
        the cache cannot hold one (an archive only ever saves CPU: it never stops a JVM from starting)."""
        if self.path.is_file():
            return [QUIET, f"-XX:SharedArchiveFile={self.path}"]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _remove_stale(self.path.parent)
        except OSError:
            return []
        return [QUIET, f"-XX:ArchiveClassesAtExit={self.part}"]

    def keep(self, exit_code: int | None) -> None:
        """After the JVM has ended: its dump becomes the archive if the JVM ended by itself or by SIGTERM (and
        no other JVM's came first); otherwise it is removed."""
        if not self.part.exists():
            return
        clean = exit_code is not None and (exit_code >= 0 or exit_code == -signal.SIGTERM)
        with contextlib.suppress(OSError):  # a cache that cannot take it: the next JVM writes one again
            if clean and not self.path.exists():
                os.replace(self.part, self.path)
            else:
                self.part.unlink(missing_ok=True)


def _jars(classpath: str) -> list[Path]:
    """The files of a classpath, its `dir/*` entries expanded to their jars as the JVM does."""
    jars: list[Path] = []
    for entry in filter(None, classpath.split(os.pathsep)):
        if entry.endswith("*"):
            jars += sorted(Path(entry[:-1] or ".").glob("*.jar"))
        else:
            jars.append(Path(entry))
    return jars


def _stat(path: Path) -> str:
    try:
        status = path.stat()
    except OSError:
        return f"{path} missing"
    return f"{path} {status.st_size} {status.st_mtime_ns}"


def _remove_stale(folder: Path) -> None:
    """Dumps of JVMs that never ended cleanly (killed, or ended without `keep`), once they are old."""
    for part in folder.glob("*.part"):
        try:
            if time.time() - part.stat().st_mtime > STALE_SECONDS:
                part.unlink()
        except OSError:
            continue
