"""A tiny paragraph store and hashing helpers for the engine tests."""

from __future__ import annotations

import hashlib
from pathlib import Path

WORDS = ("river", "election", "vaccine", "budget", "harbour", "senate", "drought", "tariff")


def tiny_corpus(root: Path, *, n: int = 150) -> Path:
    """A deterministic store of ``n`` short paragraphs at ``root/corpus``."""
    from averitec_tools.baselines.r2vc.corpus import build_corpus

    passages = [{"id": f"d{i}", "title": f"Topic {i % 7}",
                 "text": f"Paragraph {i} reports on the {WORDS[i % 8]} and the {WORDS[(i * 3) % 8]} in year {1990 + i % 30}."}
                for i in range(n)]
    out = root / "corpus"
    build_corpus(passages=passages, out_dir=str(out))
    return out


def tree_digest(path: Path) -> dict[str, str]:
    """SHA-256 of every file under ``path``, by relative name."""
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}
