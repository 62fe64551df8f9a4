"""A tiny paragraph store and hashing helpers for the engine tests."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

WORDS = ("river", "election", "vaccine", "budget", "harbour", "senate", "drought", "tariff")


def tiny_corpus(root: Path, *, n: int = 150) -> Path:
    """A deterministic store of ``n`` short paragraphs at ``root/corpus``."""
    from averitec_tools.baselines.r2vc.corpus.store import build_corpus

    passages = [{"id": f"d{i}", "title": f"Topic {i % 7}",
                 "text": f"Paragraph {i} reports on the {WORDS[i % 8]} and the {WORDS[(i * 3) % 8]} in year {1990 + i % 30}."}
                for i in range(n)]
    out = root / "corpus"
    build_corpus(passages=passages, out_dir=str(out))
    return out


@dataclass(frozen=True)
class EncodedCorpus:
    """:func:`tiny_corpus` with its MiniLM shards and flat FAISS index (local engine)."""

    corpus: Path
    shards: Path
    flat: Path


def encode_tiny_corpus(root: Path) -> EncodedCorpus:
    """Build :class:`EncodedCorpus` under ``root`` (the session fixture ``encoded_tiny_corpus``)."""
    from averitec_tools.baselines.r2vc.stages.retrieval.encode import encode_corpus
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import build_index_from_shards

    corpus = tiny_corpus(root)
    encode_corpus(corpus=corpus, shards_dir=root / "shards", model="minilm", shard_size=64)
    build_index_from_shards(shards_dir=root / "shards", out_dir=root / "flat", corpus=str(corpus), model="minilm")
    return EncodedCorpus(corpus=corpus, shards=root / "shards", flat=root / "flat")


def tree_digest(path: Path) -> dict[str, str]:
    """SHA-256 of every file under ``path``, by relative name."""
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


PYSERINI_QUERIES = ["Paragraph 17 reports on the drought", "election and vaccine in year 1995",
                    "Topic 3 harbour tariff", "senate budget"]


def lucene_hits(index_dir: Path, corpus: Path) -> list[list[tuple[str, float]]]:
    """(doc id, score) of the top 10 for each of PYSERINI_QUERIES."""
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import PyseriniRetriever

    r = PyseriniRetriever.load(store=ParagraphStore.open(corpus), index_dir=index_dir)
    return [[(h.passage.doc_id, h.score) for h in hits] for hits in r.search(PYSERINI_QUERIES, k=10)]
