"""Package data of mm2gov (governance._policies, see governance/resources.py); holds no Python code."""
