"""`mm2gov secrets issue|rotate`: which secrets were issued or rotated, and what was rolled.

Secret names, fingerprints and expiry only; never a value.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from governance.secrets.issue import Issued
    from governance.secrets.rotate import Rotation


def issued_json(issued: list[Issued]) -> str:
    return json.dumps({"issued": [i.to_record() for i in issued]}, indent=2) + "\n"


def issued_text(issued: list[Issued], where: str) -> str:
    out = [f"+ {item.describe()}" for item in issued]
    out.append(f"{len(issued)} secret(s) issued into {where}")
    return "\n".join(out) + "\n"


def rotation_json(rotation: Rotation) -> str:
    return json.dumps(rotation.to_record(), indent=2) + "\n"


def rotation_text(rotation: Rotation, where: str) -> str:
    """The rotated secrets, the objects rolled, and the flows still to restart by hand."""
    out = [f"~ {item.describe()}" for item in rotation.rotated]
    out += [f"rolled {name}" for name in rotation.rolled]
    unrolled = [f for f in rotation.flows if not any(r.endswith("/" + f) for r in rotation.rolled)]
    if unrolled:
        out.append(f"restart these MM2 flows to pick up the new secrets: {', '.join(unrolled)}")
    out.append(f"{len(rotation.rotated)} secret(s) rotated in {where}")
    return "\n".join(out) + "\n"
