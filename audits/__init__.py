"""Package data of mm2gov (governance._audits, see governance/resources.py); holds no Python code."""
