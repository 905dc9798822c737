"""GROUP_CROSS_TENANT: the detector is check.py; its catalog entry (severity, remediation...) metadata.yaml."""
