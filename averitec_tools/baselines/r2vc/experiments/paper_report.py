"""A paper run's last two stages: score every Table 2 row and write ``table.md`` / ``table.json``.

The rows measured here stand beside the paper's reported Table 2 rows, with every departure
from the paper (:func:`~averitec_tools.baselines.r2vc.experiments.recipes.departures`) and the
scores' signature; FEVER rows also carry the strict FEVER score.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.experiments.recipes import ROWS, Recipe, departures


def score_rows(recipe: Recipe, *, work: Path) -> dict[str, Any]:
    """Each table row's scores against the recipe's ``eval.jsonl`` (FEVER: with the strict FEVER score)."""
    from averitec_tools.baselines.r2vc.experiments.tables import paper_row

    r, out = recipe, {}
    for row in r.rows:
        pred = str(work / f"pred-{row}.jsonl")
        result = paper_row(predictions=pred, gold=work / "eval.jsonl", name=ROWS[row][0],
                           dataset=r.dataset).to_dict()
        if r.dataset == "FEVER":
            from averitec_tools.scoring.profiles import get_profile

            fever = get_profile("fever").score(predictions=pred, references=str(work / "eval.jsonl"))
            result["fever_score"] = {k: fever.summary.get(k) for k in ("strict_score", "label_accuracy",
                                                                         "precision", "recall", "f1")}
            result["fever_signature"] = fever.signature
        out[row] = result
    return out


def write_table(recipe: Recipe, *, work: Path, scores: dict[str, Any]) -> dict[str, Any]:
    """``table.md`` and ``table.json``: the rows measured here beside the paper's reported ones, the departures.

    Example:
        >>> import tempfile, pathlib
        >>> from averitec_tools.baselines.r2vc.experiments.recipes import load_recipe
        >>> r, work = load_recipe("paper-vitaminc"), pathlib.Path(tempfile.mkdtemp())
        >>> scores = {row: {"name": ROWS[row][0], "dataset": r.dataset, "n": 2, "accuracy": 0.5,
        ...                 "macro_f1": 0.5, "brier": 0.2, "ece": 0.1} for row in r.rows}
        >>> _ = write_table(r, work=work, scores=scores)
        >>> (work / "table.md").read_text().splitlines()[0]
        'R2VC VitaminC (paper-vitaminc; 2 claims; evidence given; oracle documents)'
    """
    from averitec_tools.baselines.r2vc.experiments.tables import (
        PAPER_TABLE2,
        PaperRow,
        markdown_table,
        signature,
    )
    from averitec_tools.jsonio import atomic_writer

    r = recipe
    rows = [PaperRow(**{k: v for k, v in scores[row].items() if k in {f.name for f in fields(PaperRow)}})
            for row in r.rows]
    reported = [PaperRow(name=f"{ROWS[row][0]} — paper, reported", dataset=r.dataset, n=0,
                         accuracy=vals[0] / 100, macro_f1=vals[1] / 100, brier=vals[2], ece=vals[3])
                for row in r.rows if (vals := PAPER_TABLE2.get(row, {}).get(r.dataset)) is not None]
    lines = [f"R2VC {r.dataset} ({r.name}; {scores[r.rows[0]]['n']} claims; evidence {r.evidence}"
             + ("; oracle documents" if r.evidence == "given" else "") + ")", "",
             f"models: generator {r.generator} (SFT → DPO here), verifier {r.verifier}, dense {r.dense}; "
             "rows marked 'paper, reported' are the paper's Table 2, not measured here", "",
             markdown_table(rows + reported),
             "", "departures from the paper:", *(f"- {d}" for d in departures(r)),
             "", f"signature: {signature()}"]
    if r.dataset == "FEVER":
        lines += ["", "| row | FEVER score (strict) | label accuracy |", "|---|---|---|"]
        lines += [f"| {ROWS[row][0]} | {scores[row]['fever_score']['strict_score']:.4f} | "
                  f"{scores[row]['fever_score']['label_accuracy']:.4f} |" for row in r.rows]
        lines += ["", f"signature: {scores[r.rows[0]]['fever_signature']}"]
    with atomic_writer(work / "table.md") as fh:
        fh.write("\n".join(lines) + "\n")
    with atomic_writer(work / "table.json") as fh:
        json.dump({"recipe": asdict(r), "departures": departures(r), "signature": signature(),
                   "rows": [scores[row] for row in r.rows],
                   "paper_reported": [x.to_dict() for x in reported]}, fh, indent=1, default=str)
    return {"table": str(work / "table.md")}


__all__ = ["score_rows", "write_table"]
