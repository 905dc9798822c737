"""Secret material: values that redact themselves, and the PKI that makes them."""

from governance.secrets.values import SecretValue, random_password

__all__ = ["SecretValue", "random_password"]
