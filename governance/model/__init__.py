"""Records of the tenancy model, shared by compile, plan, apply, admission and audit."""
