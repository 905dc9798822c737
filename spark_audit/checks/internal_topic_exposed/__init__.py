"""INTERNAL_TOPIC_EXPOSED: the detector is check.py; its catalog entry (severity, remediation...) metadata.yaml."""
