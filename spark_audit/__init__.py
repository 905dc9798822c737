"""The PySpark audit: a snapshot of the clusters + the governance repo's tenancy -> findings.

`model` (snapshot and tenancy schemas), `tenancy` (tenancy from an Inventory),
`ownership` and `access` (prefix ownership and Kafka's effective access, as
joins), `checks` (one pure detector per check), `catalog` (audits/checks/*.yaml),
`findings` (the CONTRACT.md shape), `run` (SparkSession, all checks). See README.md.
"""
