"""A wrapper for secret values whose every printable form is redacted.

The value is only reachable through `reveal()`, so an accidental f-string,
log line, repr in a traceback or JSON dump shows `<redacted>` instead.
"""

from __future__ import annotations

import math
import secrets
import string

from governance.secrets.scrub import register

REDACTED = "<redacted>"


class SecretValue:
    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError("SecretValue holds a str")
        self._value = value
        register(value)

    def reveal(self) -> str:
        """The plain value: pass it only to the component that needs it."""
        return self._value

    def __repr__(self) -> str:
        return f"SecretValue({REDACTED})"

    def __str__(self) -> str:
        return REDACTED

    def __format__(self, spec: str) -> str:
        return REDACTED

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretValue) and secrets.compare_digest(self._value, other._value)

    def __hash__(self) -> int:
        return hash(("SecretValue", len(self._value)))

    def __reduce__(self) -> tuple:
        raise TypeError("SecretValue is not picklable")


PASSWORD_ALPHABET = string.ascii_letters + string.digits


def random_password(nbytes: int = 32) -> SecretValue:
    """A random password with at least `nbytes` bytes of entropy, of letters and digits only.

    Not base64url: its `-` and `_` let a password start with `-`, which command lines read as an
    option (`keytool -storepass -J...` hands the rest to the JVM as a class name), and nothing
    else a password passes through (JAAS quotes, properties files, env files, shells) has to care."""
    length = math.ceil(nbytes * 8 / math.log2(len(PASSWORD_ALPHABET)))
    return SecretValue("".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(length)))
