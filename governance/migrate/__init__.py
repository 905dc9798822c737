"""`mm2gov migrate`: cut-over from a legacy shared MirrorMaker 2 to per-tenant flows (issue 16).

offsets.py reads and writes Connect offset records, plan.py decides per flow which legacy source
positions seed its own offsets topic and what to refuse (both pure); live.py is the I/O edge that
reads the clusters and writes the seeds (docs/migration.md).
"""
