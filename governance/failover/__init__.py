"""`mm2gov failover`: before an SRE switches a tenant's consumers from one data centre to the other, what
the switch would lose and re-read per consumer group and partition, from the flow's own MM2 topics.

get (live.py: offsets, checkpoints, offset syncs) -> transform (assess.py, pure) -> render
(governance/render/failover.py). records.py parses MM2's record formats.
"""
