"""PRINCIPAL_LOOKALIKE: see check.py."""
