"""Engines without Ray: the local engine, shards, resume, corrupt shards, address errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests._engine_helpers import lucene_hits, tiny_corpus, tree_digest


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "averitec_tools.cli.main", *args], capture_output=True,
                          text=True, timeout=120)


def test_unreachable_ray_address_is_one_line_exit_2(tmp_path: Path) -> None:
    corpus = tiny_corpus(tmp_path, n=5)
    proc = _cli("index", "sparse", "--corpus", str(corpus), "--out", str(tmp_path / "ix"),
                "--engine", "ray", "--ray-address", "127.0.0.1:1")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("averitec index: error: --ray-address 127.0.0.1:1: no Ray cluster answers there")
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "ix").exists()


def test_ray_address_needs_ray_engine(tmp_path: Path) -> None:
    proc = _cli("index", "sparse", "--corpus", str(tiny_corpus(tmp_path, n=3)), "--out", str(tmp_path / "ix"),
                "--ray-address", "127.0.0.1:6379")
    assert proc.returncode == 2 and "--ray-address needs --engine ray" in proc.stderr


def test_every_engine_checks_the_batch_size_and_the_worker_count() -> None:
    from averitec_tools.engines import Engine, get_engine

    local = get_engine("local")
    assert isinstance(local, Engine)
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        local.map_batches([1, 2], worker=lambda: (lambda xs: xs), batch_size=0)
    with pytest.raises(RuntimeError, match="worker returned 1 results for 2 items"):
        list(local.map_batches([1, 2], worker=lambda: (lambda xs: xs[:1]), batch_size=2))


def test_local_sparse_index_equals_the_retrievers_own(tmp_path: Path) -> None:
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend import Bm25sRetriever
    from averitec_tools.baselines.r2vc.stages.retrieval.sparse_build import build_bm25s

    corpus = tiny_corpus(tmp_path)
    Bm25sRetriever.build(store=ParagraphStore.open(corpus), show_progress=False).save(tmp_path / "ref")
    build_bm25s(corpus=corpus, out_dir=tmp_path / "engine", block_rows=40)
    assert tree_digest(tmp_path / "engine") == tree_digest(tmp_path / "ref")


@pytest.mark.parametrize("builder", ["build_bm25s", "build_pyserini"])
def test_a_block_size_below_one_is_refused_in_one_line(tmp_path: Path, builder: str) -> None:
    import importlib

    from averitec_tools.errors import UserError

    module = "sparse_build" if builder == "build_bm25s" else "lucene_build"
    build = getattr(importlib.import_module(f"averitec_tools.baselines.r2vc.stages.retrieval.{module}"), builder)
    with pytest.raises(UserError, match="block size must be at least 1, got 0"):
        build(corpus=tiny_corpus(tmp_path), out_dir=tmp_path / "out", block_rows=0)
    assert not (tmp_path / "out").exists()


@pytest.mark.java
def test_local_pyserini_index_searches_as_the_retrievers_own(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import (
        META_FILE,
        PyseriniRetriever,
    )
    from averitec_tools.cli.main import main

    corpus = tiny_corpus(tmp_path)
    PyseriniRetriever.build_index(store=ParagraphStore.open(corpus), index_dir=tmp_path / "ref")
    ref = lucene_hits(tmp_path / "ref", corpus)
    assert all(len(hits) == 10 for hits in ref)
    code = main(["index", "sparse", "--backend", "pyserini", "--corpus", str(corpus), "--out",
                 str(tmp_path / "engine"), "--threads", "2", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    assert (summary["backend"], summary["engine"], summary["threads"], summary["num_paragraphs"]) == (
        "pyserini", "local", 2, 150)
    assert lucene_hits(tmp_path / "engine", corpus) == ref
    assert (tmp_path / "engine" / META_FILE).read_bytes() == (tmp_path / "ref" / META_FILE).read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "engine", "ref"]  # no work dirs left
    # Smaller blocks: more JSONL files and indexing threads, the same results.
    from averitec_tools.baselines.r2vc.stages.retrieval.lucene_build import build_pyserini

    info = build_pyserini(corpus=corpus, out_dir=tmp_path / "blocks", block_rows=40)
    assert info["blocks"] == 4
    assert lucene_hits(tmp_path / "blocks", corpus) == ref
    # The output may not be the corpus (or hold it); --threads is pyserini's.
    assert main(["index", "sparse", "--backend", "pyserini", "--corpus", str(corpus), "--out", str(corpus)]) == 2
    assert "refusing to overwrite an input" in capsys.readouterr().err
    assert main(["index", "sparse", "--corpus", str(corpus), "--out", str(tmp_path / "b"), "--threads", "2"]) == 2
    assert "--threads applies to --backend pyserini" in capsys.readouterr().err


class _CountingEngine:
    """A non-local engine that runs locally and counts its work items."""

    name = "counting"

    def __init__(self) -> None:
        from averitec_tools.engines.local import LocalEngine

        self.local, self.items = LocalEngine(), 0

    def map_batches(self, items, **kwargs):  # type: ignore[no-untyped-def]
        items = list(items)
        self.items += len(items)
        return self.local.map_batches(items, **kwargs)

    def describe(self) -> dict[str, str]:
        return {"engine": self.name}


def test_build_retriever_builds_missing_indexes_on_a_non_local_engine(tmp_path: Path) -> None:
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore, build_corpus
    from averitec_tools.baselines.r2vc.stages.retrieval import build_retriever
    from averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend import Bm25sRetriever
    from averitec_tools.errors import UserError

    corpus = tiny_corpus(tmp_path, n=30)
    Bm25sRetriever.build(store=ParagraphStore.open(corpus), show_progress=False).save(tmp_path / "ref")
    engine = _CountingEngine()
    r = build_retriever(corpus=str(corpus), sparse="bm25s", dense_model=None, index_dir=tmp_path / "ix",
                        engine=engine)
    assert engine.items == 1 and tree_digest(tmp_path / "ix" / "bm25s") == tree_digest(tmp_path / "ref")
    assert r.search(["Paragraph 7 reports on the tariff"], k=1)[0][0].passage.doc_id == "d7"
    assert r.index_builds == {"bm25s": "built on engine counting"}  # read by the run summary
    again = build_retriever(corpus=str(corpus), sparse="bm25s", dense_model=None, index_dir=tmp_path / "ix",
                            engine=engine)
    assert engine.items == 1 and not hasattr(again, "index_builds")  # present: loaded, not rebuilt
    build_retriever(corpus=str(corpus), sparse="bm25s", dense_model=None, index_dir=tmp_path / "ix", engine=engine,
                    rebuild=True)
    assert engine.items == 2
    memory = build_corpus(passages=[{"id": "x", "text": "Cats purr."}])
    with pytest.raises(UserError, match="engine counting: building retrieval indexes needs a corpus on disk"):
        build_retriever(corpus=memory, sparse="bm25s", dense_model=None, index_dir=tmp_path / "m", engine=engine)


class _Killed(Exception):
    pass


def test_killed_encoding_job_resumes_and_corrupt_shard_is_named(tmp_path: Path, encoded_tiny_corpus) -> None:  # type: ignore[no-untyped-def]
    from averitec_tools.baselines.r2vc.stages.retrieval.encode import encode_corpus
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import build_index_from_shards
    from averitec_tools.errors import UserError

    corpus = encoded_tiny_corpus.corpus
    shards = tmp_path / "shards"

    def kill(n: int) -> None:
        if n == 1:
            raise _Killed

    with pytest.raises(_Killed):
        encode_corpus(corpus=corpus, shards_dir=shards, model="minilm", shard_size=64, on_shard=kill)
    manifest = json.loads((shards / "manifest.json").read_text())
    assert list(manifest["shards"]) == ["0"]
    with pytest.raises(UserError, match="not encoded yet") as exc:
        build_index_from_shards(shards_dir=shards, out_dir=tmp_path / "ix", corpus=str(corpus), model="minilm")
    assert "averitec index dense" in (exc.value.hint or "")
    again = encode_corpus(corpus=corpus, shards_dir=shards, model="minilm", shard_size=64)
    assert (again["skipped"], again["encoded"]) == (1, 2)
    build_index_from_shards(shards_dir=shards, out_dir=tmp_path / "ix", corpus=str(corpus), model="minilm")
    clean = tree_digest(encoded_tiny_corpus.flat)  # the same corpus encoded in one uninterrupted job
    assert tree_digest(tmp_path / "ix") == clean

    blob = bytearray((shards / "shard-00001.npy").read_bytes())
    blob[-1] ^= 0xFF
    (shards / "shard-00001.npy").write_bytes(bytes(blob))
    with pytest.raises(UserError, match=r"shard-00001.npy: shard 1 is corrupt") as exc:
        build_index_from_shards(shards_dir=shards, out_dir=tmp_path / "ix", corpus=str(corpus), model="minilm")
    assert f"--shards {shards}" in (exc.value.hint or "")
    (shards / "shard-00002.npy").unlink()
    fixed = encode_corpus(corpus=corpus, shards_dir=shards, model="minilm", shard_size=64)
    assert (fixed["skipped"], fixed["encoded"]) == (1, 2)
    build_index_from_shards(shards_dir=shards, out_dir=tmp_path / "ix", corpus=str(corpus), model="minilm")
    assert tree_digest(tmp_path / "ix") == clean


def test_ivfpq_index_loads_and_finds_the_paragraph(tmp_path: Path, encoded_tiny_corpus) -> None:  # type: ignore[no-untyped-def]
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.dense import DenseRetriever
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import build_index_from_shards
    from averitec_tools.errors import UserError

    corpus, shards = encoded_tiny_corpus.corpus, encoded_tiny_corpus.shards
    meta = build_index_from_shards(shards_dir=shards, out_dir=tmp_path / "ivf", corpus=str(corpus),
                                   model="minilm", index_type="ivfpq", nlist=4, pq_m=8, nbits=4)
    assert (meta["nlist"], meta["pq_m"], meta["num_paragraphs"]) == (4, 8, 150)
    r = DenseRetriever.load(store=ParagraphStore.open(corpus), index_dir=tmp_path / "ivf")
    hits = r.search(["Paragraph 17 reports on the drought"], k=5)[0]
    assert len(hits) == 5
    with pytest.raises(UserError, match="cannot train"):
        build_index_from_shards(shards_dir=shards, out_dir=tmp_path / "ivf2", corpus=str(corpus),
                                model="minilm", index_type="ivfpq")


def test_index_cli_writes_what_the_r2vc_retriever_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from averitec_tools.baselines.r2vc.stages.retrieval import build_retriever
    from averitec_tools.cli.main import main

    corpus = tiny_corpus(tmp_path, n=80)
    for kind, name in (("dense", "dense"), ("sparse", "bm25s")):
        code = main(["index", kind, "--corpus", str(corpus), "--out", str(corpus / "indexes" / name), "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert json.loads(out)["engine"] == "local"
    assert main(["index", "dense", "--corpus", str(corpus), "--out", str(corpus / "indexes" / "dense"),
                 "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["shards_encoded"], again["shards_skipped"]) == (0, 1)
    # build_retriever loads both (no rebuild: it would re-encode and take its own path).
    r = build_retriever(corpus=str(corpus), sparse="bm25s", dense_model="minilm", index_dir=str(corpus / "indexes"),
                        show_progress=False)
    hits = r.search(["Paragraph 7 reports on the tariff"], k=3)[0]
    assert len(hits) == 3 and hits[0].passage.doc_id == "d7"  # the paragraph asked for, first
    assert len({h.passage.doc_id for h in hits}) == 3


def test_cli_and_engines_import_no_ray() -> None:
    code = ("import sys; from averitec_tools.cli.main import build_parser; build_parser(); "
            "from averitec_tools.engines import get_engine; get_engine('local'); "
            "assert 'ray' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)[:5]")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
