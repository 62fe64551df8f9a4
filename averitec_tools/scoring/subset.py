"""Score a partial run: only the reference claims present in the predictions.

``averitec score --subset`` (and :func:`subset_files`) writes a copy of the references that
holds only the claims the predictions cover, plus predictions renumbered to match, and the
profile scores those as usual. Each profile aligns claims its own way, so each has a
selector (a registry, no if/elif chain):

* ``averitec2024``: predictions carry ``claim_id`` = the position in the references;
* ``averitec2023``: aligned by position: the first N reference claims (what ``--limit N``
  produces);
* ``evalai`` / ``fever``: lines carry ``id``; the references keep their order and the
  predictions are put in that order;
* ``averimatec``: items carry ``id`` = the position in the references.

The result says ``subset: N/M`` (N claims scored of the M in the references) in the JSON
summary and in the signature, so a subset score is never mistaken for a full one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import Located, iter_records, sniff_format
from averitec_tools.registry import Registry

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class SubsetFiles:
    """The files to score and how to map the scored claim ids back.

    Attributes:
        predictions: Predictions to give the profile.
        references: References holding only the covered claims.
        n: Claims scored.
        m: Claims in the original references.
        original_ids: Scored claim id → the id in the user's files (only where they differ).
    """

    predictions: Path
    references: Path
    n: int
    m: int
    original_ids: Mapping[Any, Any]

    @property
    def label(self) -> str:
        return f"{self.n}/{self.m}"


Selector = Callable[[list[Located], list[Located], str], tuple[list[Any], list[Any], dict[Any, Any]]]
SELECTORS: Registry[Selector] = Registry("--subset profile")


def _ids(preds: list[Located], key: str) -> list[Any]:
    seen: dict[Any, str] = {}
    out = []
    for loc in preds:
        if not isinstance(loc.value, Mapping) or key not in loc.value:
            raise UserError(f"{loc.where}: missing key {key!r} (--subset matches claims by it)")
        value = loc.value[key]
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise UserError(f"{loc.where}: field {key!r} must be an integer or string, found {value!r}")
        if value in seen:
            raise UserError(f"{loc.where}: duplicate {key} {value!r} (first at {seen[value]})")
        seen[value] = loc.where
        out.append(value)
    return out


def _by_claim_id(preds: list[Located], refs: list[Located], where: str, *, key: str = "claim_id",
                 ) -> tuple[list[Any], list[Any], dict[Any, Any]]:
    ids = _ids(preds, key)
    for loc, cid in zip(preds, ids, strict=True):
        if not isinstance(cid, int) or not 0 <= cid < len(refs):
            raise UserError(f"{loc.where}: {key} {cid!r} has no reference ({where} has {len(refs)} claims)")
    order = sorted(ids)
    new_id = {cid: i for i, cid in enumerate(order)}
    new_preds = [{**loc.value, key: new_id[cid]} for loc, cid in zip(preds, ids, strict=True)]
    return new_preds, [refs[cid].value for cid in order], {i: cid for cid, i in new_id.items()}


def _by_position_id(preds: list[Located], refs: list[Located], where: str) -> tuple[list[Any], list[Any], dict[Any, Any]]:
    """AVerImaTeC: ``id`` is the claim's position in the references."""
    return _by_claim_id(preds, refs, where, key="id")


def _by_position(preds: list[Located], refs: list[Located], where: str) -> tuple[list[Any], list[Any], dict[Any, Any]]:
    if len(preds) > len(refs):
        raise UserError(f"{preds[-1].where}: {len(preds)} predictions but {where} has only {len(refs)} claims")
    return [loc.value for loc in preds], [loc.value for loc in refs[: len(preds)]], {}


def _by_id(preds: list[Located], refs: list[Located], where: str) -> tuple[list[Any], list[Any], dict[Any, Any]]:
    ids = _ids(preds, "id")
    pred_by_id = {json.dumps(i): loc.value for i, loc in zip(ids, preds, strict=True)}
    kept_refs, kept_preds = [], []
    for loc in refs:
        key = json.dumps(loc.value.get("id")) if isinstance(loc.value, Mapping) else None
        if key in pred_by_id:
            kept_refs.append(loc.value)
            kept_preds.append(pred_by_id.pop(key))
    if pred_by_id:
        missing = json.loads(next(iter(pred_by_id)))
        loc = preds[ids.index(missing)]
        raise UserError(f"{loc.where}: id {missing!r} is not in {where}")
    return kept_preds, kept_refs, {}


SELECTORS.add("averitec2024", _by_claim_id)
SELECTORS.add("averitec2023", _by_position)
SELECTORS.add("evalai", _by_id)
SELECTORS.add("fever", _by_id)
SELECTORS.add("averimatec", _by_position_id)


def _write(path: Path, items: Sequence[Any], like: PathLike) -> None:
    with path.open("w", encoding="utf-8") as fh:
        if sniff_format(like) == "jsonl":
            fh.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
        else:
            json.dump(list(items), fh, ensure_ascii=False)


def subset_files(*, profile: str, predictions: PathLike, references: PathLike, workdir: PathLike) -> SubsetFiles:
    """Write the covered part of ``references`` (and matching predictions) into ``workdir``.

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "gold.json").write_text(json.dumps([{"claim": "a"}, {"claim": "b"}, {"claim": "c"}]))
        >>> _ = (d / "pred.json").write_text(json.dumps([{"claim_id": 2, "pred_label": "Refuted"}]))
        >>> s = subset_files(profile="averitec2024", predictions=d / "pred.json",
        ...                  references=d / "gold.json", workdir=d / "work")
        >>> s.label, json.loads(s.references.read_text()), dict(s.original_ids)
        ('1/3', [{'claim': 'c'}], {0: 2})
    """
    select = SELECTORS.get(profile)
    preds = list(iter_records(predictions))
    refs = list(iter_records(references))
    if not preds:
        raise UserError(f"{predictions}: no predictions (empty array or file)")
    new_preds, new_refs, original_ids = select(preds, refs, str(references))
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    out_preds, out_refs = work / Path(predictions).name, work / ("ref-" + Path(references).name)
    _write(out_preds, new_preds, predictions)
    _write(out_refs, new_refs, references)
    return SubsetFiles(out_preds, out_refs, len(new_refs), len(refs), original_ids)


def mark_result(result: Any, subset: SubsetFiles) -> Any:
    """The profile's result with ``subset: N/M`` in summary and signature, original claim ids."""
    from averitec_tools.metrics.signature import extend_signature

    # a result without a signature (a judge profile's --dry-run plan) stays without one
    signature = extend_signature(result.signature, {"subset": subset.label}) if result.signature else ""
    summary: dict[str, Any] = {}
    for key, value in result.summary.items():
        summary[key] = signature if key == "signature" else value
        if key == "n_claims":
            summary["subset"] = subset.label
    summary.setdefault("subset", subset.label)
    per_claim = tuple(
        replace(c, claim_id=subset.original_ids.get(c.claim_id, c.claim_id)) for c in result.per_claim
    )
    return replace(result, signature=signature, summary=summary, per_claim=per_claim)


def restore_paths(exc: UserError, subset: SubsetFiles, predictions: PathLike, references: PathLike) -> UserError:
    """``exc`` with the temporary paths replaced by the user's file names."""
    message = exc.message.replace(str(subset.predictions), str(predictions)).replace(
        str(subset.references), str(references)
    )
    return UserError(message, hint=exc.hint)


def score_subset(profile: Any, *, predictions: PathLike, references: PathLike, **kwargs: Any) -> Any:
    """Run ``profile.score`` on the covered subset; errors name the user's files.

    Example:
        >>> import json, pathlib, tempfile
        >>> from averitec_tools.scoring.profiles import get_profile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> gold = [{"id": i, "verifiable": "VERIFIABLE", "label": "SUPPORTS", "claim": "c",
        ...          "evidence": [[[0, 0, "P", i]]]} for i in range(4)]
        >>> _ = (d / "gold.jsonl").write_text("".join(json.dumps(g) + "\\n" for g in gold))
        >>> _ = (d / "pred.jsonl").write_text(json.dumps({"id": 2, "predicted_label": "SUPPORTS",
        ...     "predicted_evidence": [["P", 2]]}) + "\\n")
        >>> r = score_subset(get_profile("fever"), predictions=d / "pred.jsonl", references=d / "gold.jsonl")
        >>> r.summary["subset"], r.summary["strict_score"], r.per_claim[0].claim_id
        ('1/4', 1.0, 2)
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="averitec-subset-") as work:
        subset = subset_files(profile=profile.name, predictions=predictions, references=references, workdir=work)
        try:
            result = profile.score(predictions=subset.predictions, references=subset.references, **kwargs)
        except UserError as exc:
            raise restore_paths(exc, subset, predictions, references) from None
    return mark_result(result, subset)


__all__ = ["score_subset"]
