"""ACL_PREFIX_OVERLAP: the detector is check.py; its catalog entry (severity, remediation...) metadata.yaml."""
