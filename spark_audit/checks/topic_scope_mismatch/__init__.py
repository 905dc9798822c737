"""TOPIC_SCOPE_MISMATCH: the detector is check.py; its catalog entry (severity, remediation...) metadata.yaml."""
