"""ACL_STALE: the detector is check.py; its catalog entry (severity, remediation...) metadata.yaml."""
