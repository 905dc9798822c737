"""What a change to the governance repo does: structure and effective-permission diff."""
