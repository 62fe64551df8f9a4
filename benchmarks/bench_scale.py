"""Scale benchmark: sparse (bm25s) indexing and dense encoding (packaged MiniLM) of a
generated corpus on the local and the Ray engine.

Each (size, stage, engine) cell runs in a fresh subprocess so that its driver peak RSS
(``ru_maxrss``) belongs to that cell alone; Ray worker peaks are sampled every 0.2 s
with psutil over the ``ray::`` processes. Paragraphs are generated deterministically
(seeded Zipf word draws from a 5,000-word vocabulary, 30–90 words each, mean ≈ 60, by
default). ``--paragraph-words LO HI`` and ``--vocab wordpiece`` (whole-word entries of the
MiniLM tokenizer's vocabulary, one token each, instead of random letter strings that split
into ~3 word pieces) make shorter, cheaper paragraphs, so the 50k–200k dense points fit on
a 2-core machine; the corpus directory name records both settings. A cell does not start
while ``WORK/PAUSE`` exists (to run another measurement on a shared machine in between).

Usage:
    python benchmarks/bench_scale.py --sizes 50000 100000 200000 --dense-sizes 50000 \
        --engines local ray --work /tmp/bench_scale [--json OUT.json]

The dense stage writes shards of ``--shard-size`` paragraphs and builds an HNSW index
from them (encode and index seconds are reported separately). On a 2-core machine Ray
is not faster: it adds start-up, actor and serialisation costs and competes for the
same two cores — the table shows by how much.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

RAY_CPUS = 2


def _wordpiece_vocab(size: int) -> list[str]:
    """Whole alphabetic words (>= 3 letters) of the packaged MiniLM tokenizer, in id order."""
    from averitec_tools.models import load_sentence_encoder

    encoder, _ = load_sentence_encoder(model="minilm", device="cpu")
    vocab = encoder.tokenizer.get_vocab()
    words = sorted((i, w) for w, i in vocab.items() if w.isalpha() and w.isascii() and len(w) >= 3)
    return [w for _, w in words[1000:1000 + size]]  # skip the first ids (mostly rare leftovers)


def make_corpus(root: Path, n: int, *, seed: int = 0, words: tuple[int, int] = (30, 90),
                vocab_kind: str = "letters") -> Path:
    """A generated paragraph store of ``n`` paragraphs under ``root`` (built once)."""
    import numpy as np

    from averitec_tools.baselines.r2vc.corpus.store import build_corpus

    default = words == (30, 90) and vocab_kind == "letters"
    out = root / (f"corpus-{n}" if default else f"corpus-{n}-{vocab_kind}-w{words[0]}-{words[1]}")
    if (out / "corpus.json").exists():
        return out
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, size=rng.integers(3, 10))) for _ in range(5000)]
    if vocab_kind == "wordpiece":
        vocab = _wordpiece_vocab(5000)
    zipf = 1.0 / np.arange(1, len(vocab) + 1)
    zipf /= zipf.sum()

    def passages():  # type: ignore[no-untyped-def]
        for i in range(n):
            drawn = rng.choice(len(vocab), size=int(rng.integers(words[0], words[1] + 1)), p=zipf)
            yield {"id": f"g{i}", "title": vocab[i % len(vocab)].title(),
                   "text": " ".join(vocab[w] for w in drawn) + "."}

    build_corpus(passages=passages(), out_dir=str(out))
    return out


class _WorkerPeak:
    """Samples, in a thread, the RSS of Ray worker processes (``ray::`` in the name) and of
    this process (``driver_peak``: the peak of one phase, unlike the lifetime ``ru_maxrss``)."""

    def __init__(self) -> None:
        self.peak = 0
        self.driver_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        me = os.getpid()
        own = psutil.Process(me)
        while not self._stop.is_set():
            self.driver_peak = max(self.driver_peak, own.memory_info().rss)
            for p in psutil.process_iter(["name", "cmdline", "memory_info"]):
                try:
                    cmd = " ".join(p.info["cmdline"] or [])
                    if p.pid != me and ("ray::" in cmd or "ray::" in (p.info["name"] or "")):
                        self.peak = max(self.peak, p.info["memory_info"].rss)
                except (psutil.Error, TypeError, AttributeError):
                    continue
            self._stop.wait(0.2)

    def __enter__(self) -> _WorkerPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def one_cell(*, corpus: Path, stage: str, engine_name: str, work: Path, shard_size: int,
             index_type: str = "hnsw") -> dict[str, Any]:
    """Run one stage on one engine (in this process) and measure it."""
    import shutil

    from averitec_tools.engines import get_engine

    out = work / f"out-{corpus.name}-{stage}-{engine_name}"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(f"{out}.shards", ignore_errors=True)
    t0 = time.perf_counter()
    engine = get_engine(engine_name, num_cpus=RAY_CPUS)
    startup = time.perf_counter() - t0
    row: dict[str, Any] = {"engine": engine_name, "stage": stage, "startup_s": round(startup, 2)}
    with _WorkerPeak() as peak:
        t1 = time.perf_counter()
        if stage == "sparse":
            from averitec_tools.baselines.r2vc.stages.retrieval.sparse_build import build_bm25s

            info = build_bm25s(corpus=corpus, out_dir=out, engine=engine)
            row["n"] = info["num_paragraphs"]
        elif stage == "lucene":  # pyserini: JSONL blocks on the engine, Anserini in the driver's JVM
            from averitec_tools.baselines.r2vc.stages.retrieval.lucene_build import build_pyserini

            info = build_pyserini(corpus=corpus, out_dir=out, engine=engine)
            row["n"] = info["num_paragraphs"]
        else:
            from averitec_tools.baselines.r2vc.stages.retrieval.encode import encode_corpus
            from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import (
                build_index_from_shards,
            )

            manifest = encode_corpus(corpus=corpus, shards_dir=f"{out}.shards", model="minilm", engine=engine,
                                     shard_size=shard_size)
            row["encode_s"] = round(time.perf_counter() - t1, 2)
            row["encode_driver_peak_mib"] = round(peak.driver_peak / 2**20, 1)
            t2 = time.perf_counter()
            build_index_from_shards(shards_dir=f"{out}.shards", out_dir=out, corpus=str(corpus), model="minilm",
                                    index_type=index_type)
            row["index_type"] = index_type
            row["index_s"] = round(time.perf_counter() - t2, 2)
            row["n"] = manifest["num_paragraphs"]
        row["wall_s"] = round(time.perf_counter() - t1, 2)
    row["para_per_s"] = round(row["n"] / row["wall_s"], 1)
    row["driver_peak_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    row["worker_peak_mib"] = round(peak.peak / 2**20, 1) if engine_name == "ray" else None
    row["index_mib"] = round(sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 2**20, 1)
    if engine_name == "ray":
        import ray

        ray.shutdown()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="*", default=[50000, 100000, 200000],
                        help="corpus sizes for sparse indexing")
    parser.add_argument("--dense-sizes", type=int, nargs="*", default=None,
                        help="corpus sizes for dense encoding (default: --sizes)")
    parser.add_argument("--lucene-sizes", type=int, nargs="*", default=[],
                        help="corpus sizes for pyserini (Lucene) sparse indexing (default: none)")
    parser.add_argument("--engines", nargs="+", default=["local", "ray"], choices=["local", "ray"])
    parser.add_argument("--work", default="/tmp/bench_scale", help="scratch directory")
    parser.add_argument("--shard-size", type=int, default=8192)
    parser.add_argument("--index-type", default="hnsw", choices=["hnsw", "flat", "ivfpq"],
                        help="FAISS index built from the dense shards")
    parser.add_argument("--paragraph-words", type=int, nargs=2, default=[30, 90], metavar=("LO", "HI"),
                        help="words per generated paragraph (uniform, inclusive)")
    parser.add_argument("--vocab", default="letters", choices=["letters", "wordpiece"],
                        help="generated words: random letter strings or whole MiniLM word pieces")
    parser.add_argument("--json", metavar="OUT", help="also write the rows as JSON")
    parser.add_argument("--one", nargs=3, metavar=("CORPUS", "STAGE", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if args.one:
        corpus, stage, engine = args.one
        while (work / "PAUSE").exists():  # lets a shared machine run something else between cells
            time.sleep(2)
        print(json.dumps(one_cell(corpus=Path(corpus), stage=stage, engine_name=engine, work=work,
                                  shard_size=args.shard_size, index_type=args.index_type)))
        return 0
    dense_sizes = args.sizes if args.dense_sizes is None else args.dense_sizes
    cells = ([(n, "sparse") for n in args.sizes] + [(n, "lucene") for n in args.lucene_sizes]
             + [(n, "dense") for n in dense_sizes])
    rows = []
    header = (f"{'n':>8} {'stage':>6} {'engine':>6} {'startup s':>9} {'wall s':>8} {'para/s':>8} "
              f"{'driver MiB':>10} {'enc drv MiB':>11} {'worker MiB':>10} {'index MiB':>9}")
    print(header)
    order = {"sparse": 0, "lucene": 1, "dense": 2}
    for n, stage in sorted(cells, key=lambda c: (order[c[1]], c[0])):
        corpus = make_corpus(work, n, words=tuple(args.paragraph_words), vocab_kind=args.vocab)
        for engine in args.engines:
            proc = subprocess.run([sys.executable, __file__, "--work", str(work), "--shard-size",
                                   str(args.shard_size), "--index-type", args.index_type, "--one", str(corpus), stage,
                                   engine],
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                print(proc.stderr[-2000:], file=sys.stderr)
                return proc.returncode
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append(row)
            worker = "-" if row["worker_peak_mib"] is None else f"{row['worker_peak_mib']:.0f}"
            enc = f"{row['encode_driver_peak_mib']:.0f}" if "encode_driver_peak_mib" in row else "-"
            print(f"{row['n']:>8} {stage:>6} {engine:>6} {row['startup_s']:>9.1f} {row['wall_s']:>8.1f} "
                  f"{row['para_per_s']:>8.0f} {row['driver_peak_mib']:>10.0f} {enc:>11} {worker:>10} "
                  f"{row['index_mib']:>9.1f}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
