"""Writing the stack's files: `governance.files` (secrets 0600, the rest 0644, parents created)."""

from __future__ import annotations

from governance.files import write_private, write_public

__all__ = ["write_private", "write_public"]
