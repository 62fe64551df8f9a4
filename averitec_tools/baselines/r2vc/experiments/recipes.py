"""Paper recipes: what ``averitec baseline r2vc paper`` runs (see :mod:`~averitec_tools.baselines.r2vc.experiments.paper`).

A :class:`Recipe` names the data, the corpus, the models, the training and pipeline
overrides and the table rows of one paper configuration. Two are built in
(:data:`BUILTIN_RECIPES`, the paper's hub ids and ``{fever,vitaminc}/`` under the first data root holding
them: ``$AVERITEC_DATA_DIR``, then the download root ``averitec data download`` writes to);
a YAML recipe overrides any key of one (``base: paper-fever``), paths relative to the file.
Unknown keys, rows and values are refused with a clear message.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError

#: Table rows: name → (label, ablation switches).
ROWS: dict[str, tuple[str, dict[str, bool]]] = {
    "full": ("R2VC (SFT+DPO, verifier selection, SLC)", {}),
    "no_dpo": ("w/o DPO", {"no_dpo": True}),
    "no_verifier_selection": ("w/o verifier selection", {"no_verifier_selection": True}),
    "single_candidate": ("single candidate", {"single_candidate": True}),
    "no_calibration": ("w/o calibration", {"no_calibration": True}),
    "nli_only": ("NLI-only", {"nli_only": True}),
}

STEPS: tuple[str, ...] = ("data", "corpus", "sft", "dpo", "calibrate", "predict", "score", "table")
#: DPO optimizer steps of the built-in recipes (Figure F.3's curve ends its epoch at step 125).
DPO_STEPS = 125


@dataclass(frozen=True)
class Recipe:
    """One paper configuration (see the module docs for what each stage does with it)."""

    name: str
    dataset: str
    train_rows: str
    eval_claims: str
    evidence: str = "retrieved"
    calibration_evidence: str = "given"
    wiki_pages: str | None = None
    wikipedia: str | None = None
    corpus: str | None = None
    min_chars: int = 1
    eval_limit: int | None = None
    train_limit: int | None = None
    slice_size: int = 10000
    seed: int = 0
    #: Claims decoded in one generator batch (× k candidates each; experiments/batching.py).
    decode_batch: int = 8
    generator: str = "nvidia/Llama-3.1-Nemotron-Nano-8B-v1"
    verifier: str = "cross-encoder/nli-deberta-v3-large"
    dense: str | None = "BAAI/bge-large-en-v1.5"
    sft: Mapping[str, Any] = field(default_factory=dict)
    dpo: Mapping[str, Any] = field(default_factory=dict)
    pipeline: Mapping[str, Any] = field(default_factory=dict)
    rows: tuple[str, ...] = tuple(ROWS)

    def __post_init__(self) -> None:
        for key, allowed in (("evidence", ("retrieved", "given")), ("calibration_evidence", ("retrieved", "given")),
                             ("dataset", ("FEVER", "VitaminC"))):
            if getattr(self, key) not in allowed:
                raise UserError(f"recipe {self.name!r}: {key} must be one of {', '.join(allowed)}")
        if self.decode_batch < 1:
            raise UserError(f"recipe {self.name!r}: decode_batch must be at least 1, got {self.decode_batch}")
        unknown = [r for r in self.rows if r not in ROWS]
        if unknown or not self.rows:
            raise UserError(f"recipe {self.name!r}: unknown table row {unknown[0] if unknown else '(none)'!r}",
                            hint=f"rows are: {', '.join(ROWS)}")
        if sum(x is not None for x in (self.wiki_pages, self.wikipedia, self.corpus)) > 1:
            raise UserError(f"recipe {self.name!r}: give one of wiki_pages, wikipedia, corpus")

    def fingerprint(self) -> str:
        from averitec_tools.hashing import json_digest

        return json_digest(asdict(self))


def _data(relative: str) -> str:
    """``relative`` under the first data root that holds it (``$AVERITEC_DATA_DIR``, then the
    download root ``averitec data download`` writes to), else under the first root."""
    from averitec_tools.loaders.locate import data_roots, find_data_root

    return str((find_data_root(relative) or data_roots()[0]) / relative)


def _builtin(name: str) -> dict[str, Any]:
    # DPO: Figure F.3's run (its epoch-level summary is at step 125 = 2,000 pairs at batch 16),
    # not Table G.1's "1 epoch" over every VitaminC pair (docs/r2vc.md, departures)
    common = {"train_rows": _data("vitaminc/train.jsonl"), "slice_size": 10000, "dpo": {"max_steps": DPO_STEPS}}
    if name == "paper-fever":
        # ivfsq8, not Table G.1's HNSW M = 64: FEVER's ~25 M sentence units in ~26 GB, not ~116 GB (compact.py)
        return {**common, "name": name, "dataset": "FEVER", "eval_claims": _data("fever/paper_dev.jsonl"),
                "wiki_pages": _data("fever/wiki-pages"), "evidence": "retrieved",
                "pipeline": {"retrieval": {"dense_index": "ivfsq8"}}}
    return {**common, "name": name, "dataset": "VitaminC", "eval_claims": _data("vitaminc/test.jsonl"),
            "evidence": "given"}


def departures(recipe: Recipe) -> list[str]:
    """What a run of ``recipe`` does differently from the paper (Table G.1 and its text), for
    its table and JSON, so no output hides one (docs/r2vc.md lists the same, with the whys).

    Example:
        >>> fever = departures(load_recipe("paper-fever"))
        >>> [d.split(":")[0] for d in fever]  # doctest: +NORMALIZE_WHITESPACE
        ['dense index', 'retrieval', 'corpus', 'DPO', 'SFT data', 'generator', 'Table 2 rows', 'decoding']
        >>> "evidence" in [d.split(":")[0] for d in departures(load_recipe("paper-vitaminc"))]
        True
    """
    out = []
    if recipe.pipeline.get("retrieval", {}).get("dense_index") == "ivfsq8":
        out.append("dense index: ivfsq8 (IVF, 8-bit scalar codes, 15 % of the lists probed), not HNSW M = 64, "
                   "which over FEVER's ~25 M sentence units needs ~108 GiB of host RAM")
    if recipe.evidence == "retrieved":
        out.append("retrieval: one batched pass over every claim on the host CPUs before decoding, not each "
                   "claim's retrieval inside its decoding")
    if recipe.dataset == "FEVER" and recipe.wiki_pages:
        out.append("corpus: FEVER's own 2017 Wikipedia (wiki_pages), not a Nov-2023 dump (wikipedia: DUMP)")
    if recipe.dataset == "VitaminC" and recipe.evidence == "given":
        out.append("evidence: given (oracle) evidence; the paper does not say which")
    if recipe.dpo.get("max_steps"):
        out.append(f"DPO: {recipe.dpo['max_steps']} steps (Figure F.3's run), not 1 epoch over the full "
                   "VitaminC train split")
    out += ["SFT data: the train split minus the calibration slice, not all splits (which hold the test and "
            "calibration claims)",
            "generator: one SFT + DPO for every recipe of a run, not one per configuration",
            "Table 2 rows: one stored decoding per generator, replayed per row (single_candidate: the first "
            "stored candidate), not a separate run per row"]
    if recipe.decode_batch > 1:
        out.append(f"decoding: {recipe.decode_batch} claims x k candidates per generator call, not one claim "
                   "per call")
    return out


#: The recipe keys that decide the generator: recipes of one set must agree on them.
GENERATOR_KEYS: tuple[str, ...] = ("train_rows", "train_limit", "slice_size", "seed", "generator", "sft", "dpo")


def generator_key(recipe: Recipe) -> dict[str, Any]:
    """What trains a recipe's generator (:data:`GENERATOR_KEYS`).

    Example:
        >>> import os
        >>> _ = os.environ.setdefault("AVERITEC_DATA_DIR", "/data")
        >>> generator_key(load_recipe("paper-fever")) == generator_key(load_recipe("paper-vitaminc"))
        True
    """
    return {k: (dict(v) if isinstance(v := getattr(recipe, k), dict) else v) for k in GENERATOR_KEYS}


def check_one_generator(recipes: Sequence[Recipe]) -> None:
    """Refuse a set of recipes that cannot share one generator (or has clashing names).

    Example:
        >>> check_one_generator([])
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: give at least one --recipe
    """
    if not recipes:
        raise UserError("give at least one --recipe")
    names = [r.name for r in recipes]
    if len(set(names)) != len(names) or "generator" in names:
        raise UserError(f"recipe names must be distinct and not 'generator': {', '.join(names)}")
    first = generator_key(recipes[0])
    for r in recipes[1:]:
        diff = [k for k, v in generator_key(r).items() if v != first[k]]
        if diff:
            raise UserError(f"recipes {recipes[0].name!r} and {r.name!r} train different generators "
                            f"({', '.join(diff)} differ)", hint="run them with separate --work directories")


BUILTIN_RECIPES: tuple[str, ...] = ("paper-fever", "paper-vitaminc")
_PATH_KEYS = ("train_rows", "eval_claims", "wiki_pages", "wikipedia", "corpus")


def _resolve_path(value: str, *, base: Path | None, name: str, key: str) -> str:
    expanded = os.path.expanduser(os.path.expandvars(value))
    if "$" in expanded:
        raise UserError(f"recipe {name!r}: {key}: {value!r} names an unset environment variable",
                        hint="set AVERITEC_DATA_DIR to the folder holding fever/ and vitaminc/")
    path = Path(expanded)
    return str(path if path.is_absolute() or base is None else base / path)


def load_recipe(spec: str) -> Recipe:
    """A built-in recipe name or a YAML file (``base:`` a built-in) → :class:`Recipe`.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "mine.yaml"
        >>> _ = f.write_text("base: paper-vitaminc\\ntrain_rows: rows.jsonl\\neval_claims: /data/test.jsonl\\n")
        >>> r = load_recipe(str(f))
        >>> r.name, r.dataset, r.evidence, r.generator, r.rows[:2], r.train_rows == str(f.parent / "rows.jsonl")
        ('mine', 'VitaminC', 'given', 'nvidia/Llama-3.1-Nemotron-Nano-8B-v1', ('full', 'no_dpo'), True)
    """
    base: Path | None = None
    if spec in BUILTIN_RECIPES:
        data = _builtin(spec)
    else:
        from averitec_tools.configfile import load_yaml_file

        path = Path(spec)
        loaded = load_yaml_file(path, what="recipe file", hint=f"or a built-in: {', '.join(BUILTIN_RECIPES)}") or {}
        if not isinstance(loaded, dict):
            raise UserError(f"{path}: expected a mapping of recipe keys")
        parent = loaded.pop("base", None)
        data = {**(_builtin(parent) if parent in BUILTIN_RECIPES else {}), "name": path.stem, **loaded}
        if parent is not None and parent not in BUILTIN_RECIPES:
            raise UserError(f"{path}: base: unknown recipe {parent!r} (known: {', '.join(BUILTIN_RECIPES)})")
        base = path.parent
    known = {f.name for f in fields(Recipe)}
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(str(key), sorted(known), n=1)
            raise UserError(f"recipe {spec}: unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    for key in _PATH_KEYS:
        if isinstance(data.get(key), str):
            data[key] = _resolve_path(data[key], base=base, name=str(data.get("name")), key=key)
    if isinstance(data.get("rows"), list):
        data["rows"] = tuple(data["rows"])
    try:
        return Recipe(**data)
    except TypeError as exc:
        raise UserError(f"recipe {spec}: {exc}") from None


__all__ = ["BUILTIN_RECIPES", "GENERATOR_KEYS", "ROWS", "STEPS", "Recipe", "check_one_generator", "departures",
           "generator_key", "load_recipe"]
