"""Claims in chunks: retrieval runs ahead of the GPU, and BLOOM writes a chunk's questions in one pass.

Run claim by claim, the AVeriTeC baseline leaves the GPU waiting while BM25 ranks the next
claim's store (CPU), and BLOOM writes each claim's questions alone. :func:`run_chunked` takes
the claims :data:`CHUNK` at a time, fixed by position in the run's claim list (a resumed run
cuts the same chunks): while one chunk's questions are written on the GPU, a worker thread
already runs the next chunk's store and BM25 retrieval (through the stage cache, as a claim
alone would); then the question writer gets every sentence of the chunk's claims whose
questions are not in the stage cache in **one** ``write`` call, so its ``questions.batch_size``
batches fill across claims instead of stopping at each claim's last sentence; the rest of
each claim (reranker, verdict, justification) runs as before, in claim order.

With ``questions.batch_size: 1`` (the upstream setting, ``paper``) every sentence is still
decoded alone, so the questions are those of a claim-by-claim run; with larger batches a
claim's questions may depend, in their last bits, on the other sentences of its batch
(left padding changes the kernels' shapes), which are the same on every run of the same claims
here; a Ray worker (``--engine ray``) writes each claim's questions with its own sentences
only (the tiny-model test of both engines gives identical predictions:
``tests/test_engines_ray.py``).

Example:
    >>> chunks_of(["a", "b", "c"], positions={"a": 0, "b": 1, "c": 17}, size=16)
    [['a', 'b'], ['c']]
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

#: Claims per chunk.
CHUNK = 16


def chunks_of(items: Sequence[Any], *, positions: Mapping[Any, int], size: int = CHUNK,
              key: Any = lambda x: x) -> list[list[Any]]:
    """``items`` grouped by ``positions[key(item)] // size`` (their chunk in the whole run), in order."""
    out: list[list[Any]] = []
    last = None
    for item in items:
        chunk = positions[key(item)] // size
        if chunk != last:
            out.append([])
            last = chunk
        out[-1].append(item)
    return out


def _retrieve(pipe: Any, chunk: Sequence[Any]) -> dict[Hashable, Any]:
    if pipe.variant.evidence != "store":
        return {}
    return {item.claim_id: pipe.retrieved(item) for item in chunk}


def _question_pass(pipe: Any, chunk: Sequence[Any], retrieved: dict[Hashable, Any]) -> dict[Hashable, list[str]]:
    """Questions of every claim of ``chunk`` not in the stage cache, from one ``write`` call."""
    from averitec_tools.baselines.averitec.io.stage_cache import stage_key

    if not hasattr(pipe.question_writer, "prompt"):  # not an LM writer: nothing to batch
        return {}
    todo = []
    for item in chunk:
        sentences, parent, _, _ = retrieved.get(item.claim_id, (None, "", [], {}))
        key = stage_key("questions", pipe.stage_settings.get("questions"), parent)
        if sentences and not pipe.cache.has("questions", key):
            todo.append((item.claim_id, [s.text for s in sentences]))
    if not todo:
        return {}
    written = iter(pipe.question_writer.write([text for _, texts in todo for text in texts]))
    return {claim_id: [next(written) for _ in texts] for claim_id, texts in todo}


def run_chunked(pipe: Any, todo: Sequence[Any], *, claims: Sequence[Any], size: int = CHUNK) -> Iterator[Any]:
    """``pipe.run_claim`` over ``todo`` in chunks of ``size`` claims of ``claims`` (module docs)."""
    from averitec_tools.baselines._run.sidecar import sidecar_key

    positions = {sidecar_key(c.claim_id): i for i, c in enumerate(claims)}
    chunks = chunks_of(list(todo), positions=positions, size=size, key=lambda c: sidecar_key(c.claim_id))
    if not chunks:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="averitec-retrieval") as pool:
        ahead = pool.submit(_retrieve, pipe, chunks[0])
        for i, chunk in enumerate(chunks):
            retrieved = ahead.result()
            if i + 1 < len(chunks):  # the next chunk's BM25 runs while this chunk's questions are written
                ahead = pool.submit(_retrieve, pipe, chunks[i + 1])
            written = _question_pass(pipe, chunk, retrieved)
            for item in chunk:
                yield pipe.run_claim(item, retrieved=retrieved.get(item.claim_id), written=written.get(item.claim_id))


__all__ = ["CHUNK", "chunks_of", "run_chunked"]
