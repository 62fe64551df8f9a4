"""Time ``minilm-qa-f1`` (and ``minilm-verdict``) on the official baseline's dev predictions.

Scores the first ``--n`` claims of ``baseline_dev_predictions.json`` against ``dev.json``'s
Q+A strings, as ``averitec score --evidence-scorer`` does, with torch limited to
``--threads`` threads; prints for each run the wall seconds, the process CPU seconds and the
1-minute load average before and after (the machine may be shared: CPU seconds are the
figure that does not depend on the others). Runs:

* ``peer``: the plain way, one ``encode`` call per claim and side (no dedupe across claims,
  no global length sort), the scores checked equal to ours;
* ``cold``: ``minilm_qa_f1.score_strings`` with an empty reference-embedding cache (distinct
  strings once, sorted by length, one batched pass);
* ``warm``: the same with the reference embeddings cached (a gold file scored again);
* ``verdict`` (``--verdict``): ``minilm-verdict`` with the cache warm.

    AVERITEC_DATA_DIR=../shared/data python benchmarks/bench_free_scorer.py --n 500 --threads 2
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def _inputs(data: Path, n: int) -> tuple[list[list[str]], list[list[str]], list[str], list[str]]:
    from averitec_tools.records.averitec import AVeriTeCClaim
    from averitec_tools.scoring.evidence_strings import qa_strings

    dev = [AVeriTeCClaim.from_dict(r, where=f"dev.json[{i}]")
           for i, r in enumerate(json.loads((data / "averitec" / "dev.json").read_text(encoding="utf-8")))]
    preds = {p["claim_id"]: p for p in json.loads((data / "averitec" / "baseline_dev_predictions.json").read_text())}
    ids = sorted(preds)[:n]
    predicted = [[f"{e['question']} {e['answer']}" for e in preds[i]["evidence"]] for i in ids]
    return predicted, [qa_strings(dev[i].questions) for i in ids], [dev[i].claim for i in ids], \
        [dev[i].label or "" for i in ids]


def _timed(name: str, fn: Callable[[], Any]) -> Any:
    from averitec_tools.metrics import minilm_qa_f1

    minilm_qa_f1._MEMO.clear()  # every run embeds afresh (but for the on-disk reference cache)
    load0, t0, c0 = os.getloadavg()[0], time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{name:8s} {wall:8.1f} s wall {cpu:8.1f} CPU-s   load {load0:.1f} -> {os.getloadavg()[0]:.1f}")
    return out


def _peer(predicted: list[list[str]], references: list[list[str]]) -> list[float]:
    from averitec_tools.metrics.minilm_qa_f1 import _encoder, qa_f1

    model, out = _encoder(128), []
    for ps, rs in zip(predicted, references, strict=True):
        if not ps or not rs:
            out.append(0.0)
            continue
        p = model.encode(ps, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True)
        r = model.encode(rs, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True)
        out.append(qa_f1(r @ p.T))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=500, help="dev claims (default 500)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--no-peer", action="store_true", help="skip the plain per-claim run")
    ap.add_argument("--verdict", action="store_true", help="also time minilm-verdict")
    args = ap.parse_args()
    import torch

    from averitec_tools.metrics import minilm_qa_f1
    from averitec_tools.metrics.minilm_verdict import MiniLMVerdict

    torch.set_num_threads(args.threads)
    predicted, references, claims, labels = _inputs(Path(os.environ["AVERITEC_DATA_DIR"]), args.n)
    strings = [s for g in (*predicted, *references) for s in g]
    print(f"{len(predicted)} claims, {len(strings)} Q+A strings ({len(set(strings))} distinct), "
          f"torch threads {torch.get_num_threads()}, {os.cpu_count()} CPUs")
    _timed("load", lambda: minilm_qa_f1._encoder(128))
    with tempfile.TemporaryDirectory() as cache:
        cold = _timed("cold", lambda: minilm_qa_f1.score_strings(predicted=predicted, references=references,
                                                                cache_dir=Path(cache)))
        warm = _timed("warm", lambda: minilm_qa_f1.score_strings(predicted=predicted, references=references,
                                                                cache_dir=Path(cache)))
        assert np.allclose(cold, warm, atol=1e-6)
        if args.verdict:
            os.environ["AVERITEC_CACHE_DIR"] = cache
            scorer = MiniLMVerdict()
            _timed("verdict", lambda: scorer.score_claims(claims=claims, labels=labels, predicted=predicted,
                                                          references=references))
            _timed("verdict2", lambda: scorer.score_claims(claims=claims, labels=labels, predicted=predicted,
                                                           references=references))
    if not args.no_peer:
        peer = _timed("peer", lambda: _peer(predicted, references))
        print(f"largest |ours - peer|: {float(np.max(np.abs(np.array(cold) - np.array(peer)))):.2g}")
    print(f"mean minilm-qa-f1 {float(np.mean(cold)):.4f}")


if __name__ == "__main__":
    main()
