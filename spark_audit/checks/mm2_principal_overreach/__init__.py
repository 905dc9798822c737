"""MM2_PRINCIPAL_OVERREACH: the detector is check.py; its catalog entry (severity, remediation...) metadata.yaml."""
