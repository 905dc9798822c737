"""The governance repo: schema, loading with file/line for every node, semantic checks."""

from governance.config.loader import Inventory, load_inventory
from governance.config.schema import Cluster, Flow, Grant, Principal, Tenant

__all__ = ["Cluster", "Flow", "Grant", "Inventory", "Principal", "Tenant", "load_inventory"]
