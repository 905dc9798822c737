"""Client quotas mm2gov owns: per cluster, per principal, the rates the brokers enforce (KIP-13, KIP-124).

A quota is set on Kafka's `user` entity (the principal's name without `User:`), with no client-id part, so
it holds whatever client id the principal's clients use. Kafka enforces byte rates per broker: a rate here
is what one broker lets the principal produce or fetch per second (docs/capacity.md says how a flow's
catch-up rate becomes one). mm2gov owns these three keys of the principals it manages and nothing else:
a neighbour's quota, or another key (controller_mutation_rate) on a managed principal, is never touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
QUOTA_KEYS = (PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE)  # the keys mm2gov owns


@dataclass(frozen=True)
class ClientQuota:
    """One principal's quota on one cluster; None: mm2gov sets no such limit (and removes one it finds)."""

    producer_byte_rate: int | None = None
    consumer_byte_rate: int | None = None
    request_percentage: float | None = None

    def values(self) -> dict[str, float]:
        """The keys that are set, as Kafka names them, with their values."""
        return {key: value for key in QUOTA_KEYS if (value := getattr(self, key)) is not None}

    @classmethod
    def from_values(cls, values: Mapping[str, float]) -> ClientQuota:
        """From Kafka's key -> value (the keys mm2gov owns; any other key is not its own and is left out)."""
        return cls(producer_byte_rate=_rate(values.get(PRODUCER_BYTE_RATE)),
                   consumer_byte_rate=_rate(values.get(CONSUMER_BYTE_RATE)),
                   request_percentage=values.get(REQUEST_PERCENTAGE))

    def __bool__(self) -> bool:
        return bool(self.values())


def _rate(value: float | None) -> int | None:
    return None if value is None else int(value)


ClusterQuotas = dict[str, dict[str, ClientQuota]]  # cluster -> principal ("User:...") -> its quota there


class QuotaChange(NamedTuple):
    """A principal's client quota on one cluster that `apply` sets, changes or removes: between two repos
    (`plan`) or between the brokers and the repo (`apply`, `drift`). Only the keys mm2gov owns."""

    cluster: str
    principal: str
    before: ClientQuota | None
    after: ClientQuota | None

    def phrase(self) -> str:
        def shown(quota: ClientQuota | None) -> str:
            values = quota.values() if quota else {}
            return ", ".join(f"{key} {value}" for key, value in values.items()) or "none"
        return f"{self.principal} on {self.cluster}: {shown(self.before)} -> {shown(self.after)}"

    def to_record(self) -> dict[str, Any]:
        return {"cluster": self.cluster, "principal": self.principal,
                "before": self.before.values() if self.before else None,
                "after": self.after.values() if self.after else None}

    @property
    def sign(self) -> str:
        """`+` a principal gets its first owned key, `-` loses its last, `~` otherwise."""
        return "+" if not self.before else "-" if not self.after else "~"

    def to_set(self) -> dict[str, float]:
        """The keys to write (new or changed) with their values."""
        before = self.before.values() if self.before else {}
        return {key: value for key, value in (self.after.values() if self.after else {}).items()
                if before.get(key) != value}

    def to_remove(self) -> tuple[str, ...]:
        """The owned keys set now that the new quota no longer sets."""
        after = self.after.values() if self.after else {}
        return tuple(key for key in (self.before.values() if self.before else {}) if key not in after)
