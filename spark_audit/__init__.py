"""The PySpark audit: a snapshot of the clusters + the governance repo's tenancy -> findings.

`model` (snapshot and tenancy schemas), `tenancy` (tenancy from an Inventory),
`ownership` and `access` (prefix ownership and Kafka's effective access, as
joins), `checks` (a pure detector per check), `catalog` (each check's metadata, declared in
the repo's top-level audits/<check>/metadata.yaml), `findings` (the CONTRACT.md shape), `run`
(SparkSession, all checks), `report` (JSON, SARIF, history, the HTML page from Jinja2 templates). See README.md.
"""

from governance.errors import RuntimeFailure

INSTALL_HINT = "pip install 'mm2gov[audit]'"


def require_pyspark() -> None:
    """PySpark is the `audit` extra: without it, `mm2gov audit` says how to get it (exit 3)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise RuntimeFailure(f"mm2gov audit needs PySpark, which is not installed: {INSTALL_HINT}") from None
