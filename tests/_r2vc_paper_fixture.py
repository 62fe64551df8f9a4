"""Fixture data in the exact upstream layouts, built in the test: FEVER's wiki-pages and claim
rows, ``tals/vitaminc`` rows, and tiny random models, for the R2VC paper-benchmark tests.

* ``wiki-pages/wiki-001.jsonl``: FEVER's page records ``{"id", "text", "lines"}`` —
  the empty-id first record of the real file, ``lines`` as ``"<n>\\t<sentence>\\t<anchor>..."``
  entries joined by ``\\n``, an empty sentence entry, PTB bracket tokens;
* FEVER claims (``paper_dev.jsonl`` layout): ``{"id", "verifiable", "label", "claim",
  "evidence": [[[annotation_id, evidence_id, page, line], ...], ...]}``, NEI with nulls;
* VitaminC rows (``tals/vitaminc`` layout): ``unique_id``, ``case_id``,
  ``wiki_revision_id``, ``label``, ``claim``, ``evidence``, ``page``, ``revision_type``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Pages of the fixture wiki: id → sentences (index → text; None: an empty entry).
PAGES: dict[str, list[str | None]] = {
    "Zorbland": ["Zorbland is a small country .", "It is confirmed that Zorbland won the zorb cup in 2020 .", None,
                 "The zorb cup is held every year ."],
    "Quuxia_-LRB-country-RRB-": ["Quuxia -LRB- a country -RRB- trades quux .",
                                 "The claim that Quuxia banned quux imports is false ."],
    "Plimf": ["Plimf is a word about which little is written ."],
}


def wiki_record(page: str, sentences: list[str | None]) -> dict[str, Any]:
    entries = []
    for i, text in enumerate(sentences):
        entries.append(f"{i}\t" if text is None else f"{i}\t{text}\t{page.split('_')[0]}\tcountry")
    return {"id": page, "text": " ".join(t for t in sentences if t), "lines": "\n".join(entries)}


def write_wiki_pages(root: Path) -> Path:
    """``root/wiki-pages/wiki-001.jsonl`` (first record: FEVER's empty one) and ``wiki-002.jsonl``."""
    wiki = root / "wiki-pages"
    wiki.mkdir(parents=True, exist_ok=True)
    pages = list(PAGES.items())
    first = [{"id": "", "text": "", "lines": ""}] + [wiki_record(p, s) for p, s in pages[:2]]
    (wiki / "wiki-001.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first))
    (wiki / "wiki-002.jsonl").write_text("".join(json.dumps(wiki_record(p, s)) + "\n" for p, s in pages[2:]))
    return wiki


def fever_claims() -> list[dict[str, Any]]:
    return [
        {"id": 101, "verifiable": "VERIFIABLE", "label": "SUPPORTS", "claim": "Zorbland won the zorb cup.",
         "evidence": [[[9, 19, "Zorbland", 1]], [[10, 20, "Zorbland", 1], [10, 20, "Zorbland", 3]]]},
        {"id": 102, "verifiable": "VERIFIABLE", "label": "REFUTES", "claim": "Quuxia banned quux imports.",
         "evidence": [[[11, 21, "Quuxia_-LRB-country-RRB-", 1]]]},
        {"id": 103, "verifiable": "NOT VERIFIABLE", "label": "NOT ENOUGH INFO", "claim": "Plimf is a verb.",
         "evidence": [[[12, None, None, None]]]},
    ]


def vitaminc_rows(n_cases: int = 6) -> list[dict[str, Any]]:
    """Contrastive pairs: each case has a SUPPORTS and a REFUTES row on the same page."""
    rows = []
    for c in range(n_cases):
        page = ("Zorbland", "Quuxia", "Plimf")[c % 3]
        for k, (label, verb) in enumerate((("SUPPORTS", "won"), ("REFUTES", "lost"))):
            rows.append({"unique_id": f"u{c}-{k}", "case_id": f"case{c}", "wiki_revision_id": str(1000 + c),
                         "label": label if c % 4 else "NOT ENOUGH INFO",
                         "claim": f"{page} won the zorb cup in {2000 + c}.",
                         "evidence": f"It is confirmed that {page} {verb} the zorb cup in {2000 + c}.",
                         "page": page, "revision_type": "real" if k == 0 else "synthetic"})
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def tiny_models(root: Path) -> dict[str, Path]:
    """A tiny random Llama generator and a tiny random NLI cross-encoder, saved under ``root``."""
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    from tests._r2vc_helpers import save_tiny_nli_model

    tok = tiny_tokenizer()
    base = root / "tiny-base"
    tiny_lm(tok).save_pretrained(base)
    tok.save_pretrained(base)
    return {"generator": base, "verifier": save_tiny_nli_model(root / "nli")}
