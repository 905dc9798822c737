"""What a separate `mm2gov audit` process may print: its own progress lines and summary, nothing else.

Asked of the cluster-mode runs (test_audit_cluster.py) and of a local-mode run from an installed prefix
(test_image_install.py), each with the record scan and RECORD_TENANT_MISMATCH among its checks.
"""

from __future__ import annotations

import re

# Not the audit's: Spark's progress bars, Spark's or mm2gov's log lines, py4j's, librdkafka's (its own
# "%<level>|...|FAIL|" lines or through Python logging), a traceback. (Java's own one-line
# "WARNING: Using incubator modules" at JVM start is not Spark's to silence: docs/audit.md.)
NOISE = ("[Stage", " INFO ", "py4j", "%3|", "%4|", "%6|", "%7|", "FAIL|", "librdkafka", "Traceback", "log4j")


def assert_only_the_audits_output(progress: str, summary: str, master: str) -> None:
    """`progress` (what the run wrote where mm2gov writes its progress) and `summary` (where it writes its
    summary; the same text when a launcher merges the two) hold no NOISE line, every progress line of a run on
    `master` that scans records, and the one-line summary."""
    lines = (progress + summary if progress != summary else progress).splitlines()
    noise = [line for line in lines if any(marker in line for marker in NOISE)]
    assert noise == [], "\n".join(noise[:20])
    for line in ("collecting metadata from 2 clusters", f"starting Spark ({master})", "source: scanned ",
                 "target: scanned ", "running checks", "  RECORD_TENANT_MISMATCH: ", "wrote "):
        assert line in progress, (line, progress[-3000:])
    assert re.search(r"^audit \S+: \d+ findings \(", summary, re.MULTILINE), summary
