"""`mm2gov ARGS` inside the test process: the CLI's own `main()` (its error handling and exit codes), with
stdout and stderr captured, answering like `subprocess.run` does.

Why: a subprocess `mm2gov audit` starts a Spark JVM and warms its JIT for every run (25-45 s here), while
in the test process the audit finds the session's SparkSession (tests/conftest.py `spark`) already warm and
takes about 5 s. The tests that run the audit this way say so; the audit as a separate process (a user's
shell, an installed prefix, spark-submit, a Spark cluster) keeps its own tests (test_audit_cluster.py,
test_image_install.py, test_wheel.py).
"""

from __future__ import annotations

import contextlib
import gc
import io
import subprocess
import sys
import threading

from governance.cli import main

_ONE_AT_A_TIME = threading.Lock()  # sys.argv, sys.stdout and sys.stderr are the process's


def run_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `mm2gov ARGS` through `governance.cli.main` and return its exit code and output."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with _ONE_AT_A_TIME:
        argv, threshold = sys.argv, gc.get_threshold()
        sys.argv = ["mm2gov", *args]
        code: int | str | None = 0
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                main()
        except SystemExit as exit_:
            code = exit_.code
        finally:
            sys.argv = argv
            gc.set_threshold(*threshold)  # main() tunes the collector for a short-lived process
    if not isinstance(code, int):  # sys.exit("message") or sys.exit(None), as the interpreter treats them
        code = 0 if code is None else 1
    return subprocess.CompletedProcess(["mm2gov", *args], code, stdout.getvalue(), stderr.getvalue())
