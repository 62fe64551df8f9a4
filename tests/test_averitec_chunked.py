"""The AVeriTeC baseline in chunks of claims: retrieval ahead of the question pass, one BLOOM pass per
chunk, chunks fixed by position, cached claims left out (``baselines/averitec/chunked.py``)."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

from averitec_tools.baselines.averitec.chunked import run_chunked


class Writer:
    """An LM question writer stand-in (it has ``prompt``): records each ``write`` call."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.calls: list[list[str]] = []

    def prompt(self, sentence: str) -> str:
        return sentence

    def write(self, sentences: list[str]) -> list[str]:
        self.events.append(f"write {len(sentences)}")
        self.calls.append(list(sentences))
        return [f"Q: {s}?" for s in sentences]


class Cache:
    """Holds the questions of the claims whose retrieval keys are ``cached``."""

    def __init__(self, cached: set[str]) -> None:
        from averitec_tools.baselines.averitec.io.stage_cache import stage_key

        self.keys = {stage_key("questions", None, parent) for parent in cached}

    def has(self, stage: str, key: str) -> bool:
        return stage == "questions" and key in self.keys


class Pipe:
    def __init__(self, cached: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.events: list[str] = []
        self.variant = SimpleNamespace(evidence="store")
        self.question_writer = Writer(self.events)
        self.cache = Cache(set(cached))
        self.stage_settings: dict[str, Any] = {}
        self.lock = threading.Lock()

    def retrieved(self, item: Any) -> tuple[list[Any], str, list[str], dict[str, Any]]:
        with self.lock:
            self.events.append(f"retrieve {item.claim_id}")
        return [SimpleNamespace(text=f"s{item.claim_id}.{i}") for i in range(2)], f"parent-{item.claim_id}", [], {}

    def run_claim(self, item: Any, *, retrieved: Any, written: Any) -> tuple[Any, Any]:
        self.events.append(f"claim {item.claim_id}")
        return item.claim_id, written


def _claims(n: int) -> list[Any]:
    return [SimpleNamespace(claim_id=i) for i in range(n)]


def test_one_question_pass_per_chunk_with_the_next_chunks_retrieval_ahead() -> None:
    pipe, claims = Pipe(), _claims(5)
    out = list(run_chunked(pipe, claims, claims=claims, size=2))
    assert [c for c, _ in out] == [0, 1, 2, 3, 4]
    assert out[1] == (1, ["Q: s1.0?", "Q: s1.1?"])  # each claim gets its own questions back, in order
    assert pipe.question_writer.calls[0] == ["s0.0", "s0.1", "s1.0", "s1.1"]  # one pass over claims 0 and 1
    assert [len(c) for c in pipe.question_writer.calls] == [4, 4, 2]
    # chunk 2's retrieval was asked for before chunk 1's questions were written
    assert pipe.events.index("retrieve 2") < pipe.events.index("write 4", pipe.events.index("claim 1"))


def test_chunks_are_fixed_by_position_and_cached_claims_are_left_out() -> None:
    """A resumed run (claims 0 and 1 done) cuts the chunks of the whole run; a claim whose questions are
    cached is not written again."""
    pipe, claims = Pipe(cached={"parent-3"}), _claims(5)
    out = list(run_chunked(pipe, claims[2:], claims=claims, size=2))
    assert [c for c, _ in out] == [2, 3, 4] and out[1] == (3, None)
    assert pipe.question_writer.calls == [["s2.0", "s2.1"], ["s4.0", "s4.1"]]
