"""mm2gov: keep lines of business apart when Kafka data is replicated with MirrorMaker 2."""

__version__ = "0.1.0"
