"""Stream a 1 GB knowledge store in the 2024 layout and compare with ``json.loads`` over the same files.

Writes a synthetic store (``--gb`` gigabytes of ``<claim_id>.json`` JSON-lines files, each
line ``{claim_id, type, query, url, url2text}`` with ~40 sentences, as pages in the real
store) under a temporary folder, then reads it in four child processes, one at a time:

* ``stream``: ``loaders.load("averitec/knowledge_store", split="dev", streaming=True)``,
  every row iterated (rows as ``datasets`` yields them: dicts with the features' types);
* ``records``: ``loaders.iter_dataset("averitec/knowledge_store", split="dev")``: the same bounded
  reader and checks, typed records (``StoreDocument``), no ``datasets``;
* ``json.loads``: every line of every file read and parsed with ``json.loads`` (the floor:
  no validation, no rows built), streamed the same way;
* ``json.loads per file``: each claim file read whole and parsed line by line into a list
  before moving on (what reading "a claim at a time" costs in memory).

Prints rows, seconds (CPU and wall), rows per second, and peak RSS (``ru_maxrss``) next to
the RSS after imports, for each; the folder is deleted at the end.

    nice -n 10 python benchmarks/bench_knowledge_store.py --gb 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WORDS = ("claim", "minister", "vaccine", "percent", "report", "election", "video", "photo", "state", "said",
          "million", "police", "court", "water", "fire", "market", "school", "health", "city", "year")


def write_store(folder: Path, *, total: int, claims: int, seed: int = 0) -> tuple[int, int]:
    """A store of about ``total`` bytes over ``claims`` files; returns (documents, bytes)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    per_claim = total // claims
    docs = written = 0
    for claim in range(claims):
        with open(folder / f"{claim}.json", "w", encoding="utf-8") as fh:
            size = 0
            while size < per_claim:
                text = [" ".join(rng.choices(_WORDS, k=rng.randint(8, 30))).capitalize() + "." for _ in range(40)]
                line = json.dumps({"claim_id": claim, "type": "question", "query": f"query {docs}",
                                   "url": f"https://example.org/{claim}/{docs}", "url2text": text}) + "\n"
                fh.write(line)
                size += len(line)
                docs += 1
        written += size
    return docs, written


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(mode: str, folder: str) -> None:
    """Read the store one way and print a JSON line of figures."""
    if mode in ("stream", "records"):
        from averitec_tools import loaders

    if mode == "stream":
        ds = loaders.load("averitec/knowledge_store", split="dev", data_dir=folder, streaming=True)
        import datasets  # noqa: F401  (imported by load; counted in the RSS after imports)
    after_imports = _rss_mb()
    t, c = time.perf_counter(), time.process_time()
    rows = 0
    if mode == "stream":
        for _ in ds:
            rows += 1
    elif mode == "records":  # the same reader and checks, typed records, no datasets
        for _ in loaders.iter_dataset("averitec/knowledge_store", split="dev", data_dir=folder):
            rows += 1
    elif mode == "json.loads":
        for path in sorted(Path(folder).glob("*.json")):
            with open(path, "rb") as fh:
                for line in fh:
                    if line.strip():
                        json.loads(line)
                        rows += 1
    else:
        for path in sorted(Path(folder).glob("*.json")):
            with open(path, "rb") as fh:
                docs = [json.loads(line) for line in fh if line.strip()]
            rows += len(docs)
            del docs
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"mode": mode, "rows": rows, "wall": wall, "cpu": cpu, "rss_after_imports_mb": after_imports,
                      "peak_rss_mb": peak}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, default=1.0, help="store size in GB (default 1)")
    ap.add_argument("--claims", type=int, default=250, help="claim files (default 250: ~4 MB each at 1 GB)")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "FOLDER"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="ks-bench-") as tmp:
        folder = Path(tmp) / "dev"
        t = time.perf_counter()
        docs, size = write_store(folder, total=int(args.gb * 1e9), claims=args.claims)
        print(f"store: {args.claims} claim files, {docs} documents, {size / 1e9:.2f} GB "
              f"(written in {time.perf_counter() - t:.0f} s); load {os.getloadavg()[0]:.2f}")
        results = {}
        for mode in ("stream", "records", "json.loads", "json.loads per file"):
            out = subprocess.run([sys.executable, __file__, "--child", mode, str(folder)], check=True,
                                 capture_output=True, text=True, env={**os.environ, "HF_DATASETS_OFFLINE": "1"})
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results[mode] = r
            assert r["rows"] == docs, (mode, r["rows"], docs)
            print(f"{mode:>20}: {r['rows']} rows in {r['wall']:.1f} s wall / {r['cpu']:.1f} s CPU = "
                  f"{r['rows'] / r['wall']:,.0f} rows/s ({size / 1e6 / r['wall']:.0f} MB/s); peak RSS "
                  f"{r['peak_rss_mb']:.0f} MB (after imports {r['rss_after_imports_mb']:.0f} MB)")
        ratio = results["json.loads"]["cpu"] / results["stream"]["cpu"]
        print(f"stream / json.loads: {ratio:.2f}x the rows per CPU second; load {os.getloadavg()[0]:.2f}")
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
