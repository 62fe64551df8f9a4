"""The SLC calibration slice (paper §3.5: "a held-out slice of 10,000 VitaminC examples").

The paper fine-tunes the generator on *all* VitaminC splits and fits the calibrator on
10,000 VitaminC examples, so its slice was seen in SFT. :func:`draw_calibration_slice`
draws the slice so that it is disjoint from the generator's training data:

* rows are drawn in whole **groups** — VitaminC's ``case_id`` (the contrastive pairs of
  one Wikipedia revision, whose claims and evidence nearly coincide), else the claim
  text — so no sibling of a slice row is left on the training side;
* a group any of whose claims appears in an ``exclude`` file (e.g. data the generator
  was already trained on) never enters the slice;
* the rows not drawn are returned as the *rest*: the SFT/DPO data disjoint from the
  slice (``averitec baseline r2vc slice --rest``), or exclude the slice from existing
  training data with ``train sft --exclude-claims SLICE``.

Groups are shuffled with ``seed`` and taken while they fit, so the slice has exactly
``n`` rows (an error says so when whole groups cannot make ``n``).

Example:
    >>> rows = [{"case_id": f"c{i // 2}", "claim": f"claim {i}", "label": "SUPPORTS"} for i in range(10)]
    >>> s = draw_calibration_slice(rows=rows, n=4, seed=0)
    >>> len(s.slice), len(s.rest), {r["case_id"] for r in s.slice} & {r["case_id"] for r in s.rest}
    (4, 6, set())
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from averitec_tools.errors import UserError


@dataclass(frozen=True)
class CalibrationSlice:
    """A drawn slice, the rows left for training, and what was done.

    Attributes:
        slice: The slice rows, in file order.
        rest: Every other row, in file order (the training side).
        info: Counts: ``rows``, ``groups``, ``slice_rows``, ``slice_groups``,
            ``excluded_groups`` (groups barred by ``exclude``), ``group_key``, ``seed``.
    """

    slice: list[dict[str, Any]]
    rest: list[dict[str, Any]]
    info: dict[str, Any] = field(default_factory=dict)


def group_key(row: Mapping[str, Any]) -> tuple[str, str]:
    """A row's group: ``("case_id", id)`` for VitaminC rows, else ``("claim", text)``.

    Example:
        >>> group_key({"case_id": "5", "claim": "x"}), group_key({"claim": " x "})
        (('case_id', '5'), ('claim', 'x'))
    """
    case = row.get("case_id")
    if case is not None and str(case).strip():
        return ("case_id", str(case))
    return ("claim", str(row.get("claim", "")).strip())


def claims_in(paths: Iterable[str | os.PathLike[str]]) -> set[str]:
    """Claim texts (stripped) of every JSON/JSONL file in ``paths``."""
    from averitec_tools.jsonio import iter_records

    out: set[str] = set()
    for path in paths:
        for loc in iter_records(path):
            if isinstance(loc.value, Mapping) and isinstance(loc.value.get("claim"), str):
                out.add(loc.value["claim"].strip())
    return out


def draw_calibration_slice(
    *, rows: Sequence[Mapping[str, Any]], n: int, seed: int = 0, exclude: set[str] | None = None
) -> CalibrationSlice:
    """Draw ``n`` rows in whole groups, none of whose claims is in ``exclude``.

    Raises:
        UserError: ``n`` < 1, fewer than ``n`` rows are eligible, or whole groups cannot
            make exactly ``n`` rows.
    """
    if n < 1:
        raise UserError(f"--n must be at least 1, got {n}")
    exclude = exclude or set()
    groups: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(group_key(row), []).append(i)
    barred = {key for key, members in groups.items()
              if any(str(rows[i].get("claim", "")).strip() in exclude for i in members)}
    eligible = [key for key in groups if key not in barred]
    available = sum(len(groups[key]) for key in eligible)
    if available < n:
        raise UserError(f"only {available} rows ({len(eligible)} groups) are eligible for a slice of {n}",
                        hint="lower --n or exclude fewer claims")
    random.Random(seed).shuffle(eligible)
    chosen: set[int] = set()
    n_groups = 0
    for key in eligible:
        if len(chosen) == n:
            break
        if len(chosen) + len(groups[key]) <= n:
            chosen.update(groups[key])
            n_groups += 1
    if len(chosen) < n:
        raise UserError(f"whole groups make {len(chosen)} rows, not the {n} asked for",
                        hint="choose another --n or --seed")
    kinds = {key[0] for key in groups}
    info = {
        "rows": len(rows), "groups": len(groups), "slice_rows": len(chosen), "slice_groups": n_groups,
        "excluded_groups": len(barred), "group_key": "case_id" if kinds == {"case_id"} else "+".join(sorted(kinds)),
        "seed": seed,
    }
    return CalibrationSlice(
        slice=[dict(rows[i]) for i in sorted(chosen)],
        rest=[dict(r) for i, r in enumerate(rows) if i not in chosen],
        info=info,
    )


def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of a JSON array or JSONL file; each must be an object with a ``claim`` string.

    Raises:
        UserError: naming ``file:line`` for a row that is not such an object, or an empty file.
    """
    from averitec_tools.jsonio import iter_records

    out = []
    for loc in iter_records(path):
        if not isinstance(loc.value, Mapping) or not isinstance(loc.value.get("claim"), str):
            raise UserError(f"{loc.where}: expected an object with a 'claim' string")
        out.append(dict(loc.value))
    if not out:
        raise UserError(f"{os.fspath(path)}: no rows")
    return out


def write_rows(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """Write rows as JSONL, atomically."""
    import json

    from averitec_tools.jsonio import atomic_writer

    with atomic_writer(path) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


__all__ = ["claims_in", "draw_calibration_slice", "group_key", "read_rows", "write_rows"]
