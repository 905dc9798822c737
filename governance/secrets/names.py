"""Keys of the secrets mm2gov reads and writes. Secret *names* are derived in
`governance.model.names` (one injective convention for every derived name) and
re-exported here for the secrets code.

Secrets are referenced by name and key only (Kubernetes Secret keys, or files
`<root>/<name>/<key>` when mounted or kept in a directory); values never leave
the store.
"""

from __future__ import annotations

from governance.model.names import ca_key_secret, scram_secret, tls_secret, user_name

__all__ = ["CA_CERT_KEY", "PASSWORD_KEY", "USERNAME_KEY", "ca_key_secret", "scram_secret", "tls_secret", "user_name"]

PASSWORD_KEY = "password"
USERNAME_KEY = "username"
CA_CERT_KEY = "ca.crt"
