"""The one way subcommands write ``--json`` output: exactly one JSON object on stdout."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any


def print_json(obj: Mapping[str, Any]) -> None:
    """Write ``obj`` as a single JSON line on stdout (UTF-8, not ASCII-escaped).

    Example:
        >>> print_json({"n": 1, "label": "Réfuté"})
        {"n": 1, "label": "Réfuté"}
    """
    sys.stdout.write(json.dumps(dict(obj), ensure_ascii=False) + "\n")
