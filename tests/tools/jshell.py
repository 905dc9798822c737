"""Kafka's own classes as the oracle, through jshell on a Kafka's jars.

A jshell run costs seconds of CPU before its first line (a JVM and jshell's own compiler warming up), so a
module asks everything of one Kafka in one run: `ask` runs several named scripts in one jshell and returns
each one's printed answers.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping

from governance import tools

_PART = "@@part "
_END = "@@end"


def jshell(classpath: str, script: str) -> list[str]:
    """Run `script` in jshell with `classpath`; the lines it printed that start with "@"."""
    shell = tools.java().resolve().with_name("jshell")
    done = subprocess.run([str(shell), "-q", "--class-path", classpath, "-"], input=script + "\n/exit\n",
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.startswith("@")]


def ask(classpath: str, scripts: Mapping[str, str]) -> dict[str, list[str]]:
    """Each script's "@" lines, from one jshell that runs them in turn. jshell goes on after a statement that
    fails, so every script must have run to its end (a marker printed after it) and printed something."""
    parts = [line for name, script in scripts.items()
             for line in (f'System.out.println("{_PART}{name}");', script)]
    lines = jshell(classpath, "\n".join([*parts, f'System.out.println("{_END}");']))
    assert lines and lines[-1] == _END, f"jshell stopped before the end: {lines[-5:]}"
    answers: dict[str, list[str]] = {}
    current: list[str] = []
    for line in lines[:-1]:
        if line.startswith(_PART):
            current = answers.setdefault(line.removeprefix(_PART), [])
        else:
            current.append(line)
    empty = [name for name in scripts if not answers.get(name)]
    assert not empty, f"jshell printed nothing for {empty}"
    return answers
