"""Fakes and tiny fixtures shared by the R2VC verifier/calibrator/pipeline/CLI tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from averitec_tools.baselines.r2vc.types import Passage, ScoredPassage


class TableNLI:
    """Fake NLI backend: probabilities looked up by passage text (default: neutral)."""

    name = "table"

    def __init__(self, table: dict[str, Sequence[float]], default: Sequence[float] = (0.1, 0.8, 0.1)):
        self.table = {k: np.asarray(v, dtype=float) for k, v in table.items()}
        self.default = np.asarray(default, dtype=float)
        self.calls: list[int] = []

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.calls.append(len(pairs))
        return np.stack([self.table.get(p, self.default) for _, p in pairs]) if pairs else np.zeros((0, 3))


class KeywordNLI:
    """Fake NLI: a passage entails the claim if it contains 'confirmed', contradicts it if 'false'."""

    name = "keyword"

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        rows = []
        for _, p in pairs:
            if "confirmed" in p:
                rows.append([0.02, 0.08, 0.90])
            elif "false" in p:
                rows.append([0.90, 0.08, 0.02])
            else:
                rows.append([0.10, 0.80, 0.10])
        return np.asarray(rows).reshape(len(pairs), 3)


class ListRetriever:
    """Fake retriever: passages sharing a word of ≥ 4 letters with the query, in list order."""

    name = "list"

    def __init__(self, passages: Sequence[Passage]):
        self.passages = list(passages)

    def search(self, queries: Sequence[str], *, k: int) -> list[list[ScoredPassage]]:
        out = []
        for q in queries:
            words = {w for w in q.lower().split() if len(w) >= 4}
            hits = [ScoredPassage(p, 1.0, "list") for p in self.passages
                    if words & {w.strip(".,") for w in p.text.lower().split()}]
            out.append(hits[:k])
        return out


def tiny_claims() -> list[dict]:
    """Four AVeriTeC-style claims (one with no matching passage → empty retrieval)."""
    return [
        {"claim": "Zorbland won the zorb cup", "label": "Supported"},
        {"claim": "Quuxia banned quux imports", "label": "Refuted"},
        {"claim": "Nobody knows about plimf", "label": "Not Enough Evidence"},
        {"claim": "xyzzy", "label": "Refuted"},
    ]


def tiny_passages() -> list[Passage]:
    return [
        Passage("z1", "Zorbland", "https://z.org/1", "It is confirmed that Zorbland won the zorb cup in 2020."),
        Passage("z2", "Zorb", "https://z.org/2", "The zorb cup is held every year."),
        Passage("q1", "Quuxia", "https://q.org/1", "The claim that Quuxia banned quux imports is false."),
        Passage("q2", "Quux", "https://q.org/2", "Quuxia trades quux with neighbours."),
        Passage("p1", "Plimf", "https://p.org/1", "Plimf is a word about which little is written."),
    ]


def write_tiny_corpus_inputs(tmp: Path) -> tuple[Path, Path]:
    """Write the tiny claims (JSON) and passages (JSONL); returns their paths."""
    claims = tmp / "claims.json"
    claims.write_text(json.dumps(tiny_claims()))
    passages = tmp / "passages.jsonl"
    passages.write_text("".join(json.dumps(p.__dict__) + "\n" for p in tiny_passages()))
    return claims, passages


def save_tiny_nli_model(path: Path, *, id2label: dict[int, str] | None = None) -> Path:
    """A tiny randomly initialised BERT sequence classifier with an NLI id2label, saved to ``path``."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted({
        w.strip(".,").lower() for p in tiny_passages() for w in p.text.split()
    } | {w.lower() for c in tiny_claims() for w in c["claim"].split()})]
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(vocab_file=str(path / "vocab.txt"))
    id2label = id2label or {0: "entailment", 1: "neutral", 2: "contradiction"}
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=128, num_labels=3,
                     id2label=id2label, label2id={v: k for k, v in id2label.items()})
    import torch

    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return path
