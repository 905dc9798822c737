"""`mm2gov probe`: each tenant flow's replication SLO measured end to end with canary records (issue 17).

Pure cores: canary.py (the record a probe writes and how to read it back), assess.py (what a run's sent
and received canaries say: latency, loss, duplicates, reordering, partition affinity, SLO misses).
"""
