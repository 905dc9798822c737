"""Entry point for `spark-submit .../spark_audit/main.py REPO --out OUT ...`: `mm2gov audit` with the
master, resources and jars spark-submit provides (the session is not given a master here).

Where the installed file is: `python -c 'import spark_audit.main as m; print(m.__file__)'`
(docs/audit.md has the whole command).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # Run as a script, Python puts this file's directory first on the path, where the package's own
    # modules (records, report, checks...) would shadow top-level ones: put the directory that holds
    # the package there instead (the checkout, or site-packages).
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from governance.cli import main

if __name__ == "__main__":
    sys.argv = ["mm2gov", "audit", *sys.argv[1:], "--spark-master", ""]
    main()
