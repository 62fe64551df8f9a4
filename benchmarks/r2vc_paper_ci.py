"""``make r2vc-paper-ci R2VC_PAPER_OUT=DIR``: the ``make r2vc-paper`` command with tiny random models.

Writes fixture data in the upstream layouts and two tiny recipes into ``DIR-inputs/``
(``tiny-fever.yaml``: FEVER claims over a FEVER wiki-pages corpus, ``base: paper-fever``;
``tiny-vitaminc.yaml``: VitaminC rows with their given evidence, ``base: paper-vitaminc``;
both trained on the same VitaminC-layout rows), then runs the one command ``make
r2vc-paper`` runs, ``averitec baseline r2vc paper --recipe A --recipe B --work DIR``, which
writes ``DIR/paper_manifest.json`` (generator trainings and loads, decodings per claim and
slice decodings, the dense index, each stage's measured hours beside the plan's, counted from
``DIR/ledger.jsonl``). FEVER runs the paper's retrieval path: bm25s and a dense encoder (the
packaged all-MiniLM-L6-v2, the one real encoder installable offline) over an ``ivfsq8`` index.
CPU, a few minutes; ``tests/test_r2vc_paper.py`` runs the same function, and ``make gpu-check``
runs it on CUDA (``device="cuda"``).
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT), str(_ROOT / "tests")]

FAST = ("{max_steps: 1, warmup_ratio: 0.0, per_device_train_batch_size: 2, gradient_accumulation_steps: 1, "
        "max_length: 512, n_passages: 2, logging_steps: 1}")
PIPELINE = ("pipeline:\n  retrieval: {{sparse: bm25s, top_m: 4, dense_index: ivfsq8, device: {device}}}\n"
            "  generator: {{k: 2, max_new_tokens: 4, device: {device}}}\n"
            "  verifier: {{device: {device}}}\n  calibration: {{fit_candidates: 2}}\n")


def write_inputs(root: Path, *, device: str = "cpu", dense: str = "minilm") -> list[Path]:
    """The fixture data, tiny models and the two recipes under ``root`` (models on ``device``, ``dense`` the
    dense encoder); returns the recipe files."""
    from _r2vc_paper_fixture import (
        fever_claims,
        tiny_models,
        vitaminc_rows,
        write_jsonl,
        write_wiki_pages,
    )

    root.mkdir(parents=True, exist_ok=True)
    models = tiny_models(root)
    write_wiki_pages(root)
    write_jsonl(root / "paper_dev.jsonl", fever_claims())
    rows = vitaminc_rows(8)
    write_jsonl(root / "train.jsonl", rows[:12])
    write_jsonl(root / "test.jsonl", rows[12:])
    common = (f"train_rows: train.jsonl\nslice_size: 4\ndecode_batch: 2\ngenerator: {models['generator']}\n"
              f"verifier: {models['verifier']}\ndense: {dense}\nsft: {FAST}\n"
              f"dpo: {FAST.replace(', warmup_ratio: 0.0', '')}\n{PIPELINE.format(device=device)}")
    fever = root / "tiny-fever.yaml"
    fever.write_text("base: paper-fever\neval_claims: paper_dev.jsonl\nwiki_pages: wiki-pages\n" + common
                     + "rows: [full, no_dpo, no_calibration, nli_only]\n")
    vitc = root / "tiny-vitaminc.yaml"
    vitc.write_text("base: paper-vitaminc\neval_claims: test.jsonl\n" + common + "rows: [full, no_dpo, single_candidate]\n")
    return [fever, vitc]


def paper_argv(recipes: list[Path], work: Path) -> list[str]:
    """The ``averitec`` arguments ``make r2vc-paper`` runs, for these recipes."""
    return ["baseline", "r2vc", "paper", *(x for r in recipes for x in ("--recipe", str(r))), "--work", str(work)]


def main(out: str) -> int:
    from averitec_tools.cli.main import main as averitec

    work = Path(out)  # the inputs beside it: a --work folder never holds its inputs
    return averitec(paper_argv(write_inputs(work.with_name(work.name + "-inputs")), work))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: r2vc_paper_ci.py OUT_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
