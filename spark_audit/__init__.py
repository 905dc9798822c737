"""The PySpark audit job: live snapshot of both clusters + record scan -> findings.

Runs under `mm2gov audit` (local Spark) or `spark-submit` on any Spark cluster.
Built by issue 7 (collect, records, detectors, report).
"""
