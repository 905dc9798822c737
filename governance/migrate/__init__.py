"""`mm2gov migrate`: cut-over from a legacy shared MirrorMaker 2 to per-tenant flows (issue 16).

Pure cores only: offsets.py reads and writes Connect offset records, plan.py decides per flow
which legacy source positions seed its own offsets topic and what to refuse.
"""
