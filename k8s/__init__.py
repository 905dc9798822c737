"""Package data of mm2gov (governance._k8s, see governance/resources.py); holds no Python code."""
