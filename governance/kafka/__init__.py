"""The thin edge to live Kafka clusters: AdminClient calls, nothing else."""
