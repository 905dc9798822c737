"""Names and keys of the secrets mm2gov reads and writes, both defined in
`governance.model.names` (one injective convention for every derived name; the
compiler, a layer below the secrets code, reads them there) and re-exported here
for the secrets code.

Secrets are referenced by name and key only (Kubernetes Secret keys, or files
`<root>/<name>/<key>` when mounted or kept in a directory); values never leave
the store.
"""

from __future__ import annotations

from governance.model.names import (
    CA_CERT_KEY,
    PASSWORD_KEY,
    USERNAME_KEY,
    ca_key_secret,
    scram_secret,
    tls_secret,
    user_name,
)

__all__ = ["CA_CERT_KEY", "PASSWORD_KEY", "USERNAME_KEY", "ca_key_secret", "scram_secret", "tls_secret", "user_name"]
