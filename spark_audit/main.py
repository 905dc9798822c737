"""Entry point for `spark-submit spark_audit/main.py REPO --out OUT ...`: `mm2gov audit` with the
master, resources and jars spark-submit provides (the session is not given a master here)."""

from __future__ import annotations

import sys

from governance.cli import main

if __name__ == "__main__":
    sys.argv = ["mm2gov", "audit", *sys.argv[1:], "--spark-master", ""]
    main()
