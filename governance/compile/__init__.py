"""Compile OPA's tenant scopes into what enforces them (ACLs now; MM2, Strimzi, monitoring next)."""
