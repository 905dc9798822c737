"""The thin edge to Kubernetes: the `kubernetes` client, nothing else."""
