"""The Ray engine on a real local runtime (2 CPUs, 127.0.0.1, started once per session).

Outputs must be byte-identical to the local engine's; a killed worker is retried; a
killed job resumes. In CI a missing Ray fails these tests (the ``ray_runtime`` fixture).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests._engine_helpers import lucene_hits, tiny_corpus, tree_digest


class _Killed(Exception):
    pass


def test_dense_and_sparse_indexes_identical_between_engines(tmp_path: Path, ray_runtime: object,
                                                            encoded_tiny_corpus) -> None:  # type: ignore[no-untyped-def]
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend import Bm25sRetriever
    from averitec_tools.baselines.r2vc.stages.retrieval.dense import DenseRetriever
    from averitec_tools.baselines.r2vc.stages.retrieval.encode import encode_corpus
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import build_index_from_shards
    from averitec_tools.baselines.r2vc.stages.retrieval.sparse_build import build_bm25s
    from averitec_tools.engines import get_engine

    corpus = encoded_tiny_corpus.corpus  # its local-engine shards and index are built once per session
    store = ParagraphStore.open(corpus)
    DenseRetriever.build(store=store, model="minilm", chunk_size=64, show_progress=False).save(tmp_path / "ref")
    Bm25sRetriever.build(store=store, show_progress=False).save(tmp_path / "ref_bm25")
    ray_engine = get_engine("ray")
    encode_corpus(corpus=corpus, shards_dir=tmp_path / "s_ray", model="minilm", shard_size=64, engine=ray_engine)
    build_index_from_shards(shards_dir=tmp_path / "s_ray", out_dir=tmp_path / "ix_ray", corpus=str(corpus),
                            model="minilm")
    digests = {"local": tree_digest(encoded_tiny_corpus.flat), "ray": tree_digest(tmp_path / "ix_ray")}
    for name, engine in (("local", get_engine("local")), ("ray", ray_engine)):
        build_bm25s(corpus=corpus, out_dir=tmp_path / f"bm_{name}", engine=engine, block_rows=40)
        assert tree_digest(tmp_path / f"bm_{name}") == tree_digest(tmp_path / "ref_bm25")
    assert digests["local"] == digests["ray"] == tree_digest(tmp_path / "ref")
    shard_digest = tree_digest(encoded_tiny_corpus.shards)
    shard_digest.pop("manifest.json")
    ray_shards = tree_digest(tmp_path / "s_ray")
    ray_shards.pop("manifest.json")
    assert shard_digest == ray_shards

    # A job killed after its first shard resumes on Ray to the same index.
    def kill(n: int) -> None:
        if n == 1:
            raise _Killed

    with pytest.raises(_Killed):
        encode_corpus(corpus=corpus, shards_dir=tmp_path / "s_kill", model="minilm", shard_size=64,
                      engine=ray_engine, on_shard=kill)
    resumed = encode_corpus(corpus=corpus, shards_dir=tmp_path / "s_kill", model="minilm", shard_size=64,
                            engine=ray_engine)
    assert resumed["skipped"] >= 1 and resumed["skipped"] + resumed["encoded"] == 3
    build_index_from_shards(shards_dir=tmp_path / "s_kill", out_dir=tmp_path / "ix_kill", corpus=str(corpus),
                            model="minilm")
    assert tree_digest(tmp_path / "ix_kill") == digests["local"]


@pytest.mark.java
def test_pyserini_index_searches_identically_on_ray(tmp_path: Path, ray_runtime: object,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import PyseriniRetriever
    from averitec_tools.cli.main import main

    corpus = tiny_corpus(tmp_path)
    PyseriniRetriever.build_index(store=ParagraphStore.open(corpus), index_dir=tmp_path / "ref")
    code = main(["index", "sparse", "--backend", "pyserini", "--corpus", str(corpus), "--out",
                 str(tmp_path / "ray"), "--engine", "ray", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert (json.loads(out)["engine"], json.loads(out)["backend"]) == ("ray", "pyserini")
    ref = lucene_hits(tmp_path / "ref", corpus)
    assert lucene_hits(tmp_path / "ray", corpus) == ref
    from averitec_tools.baselines.r2vc.stages.retrieval.lucene_build import build_pyserini
    from averitec_tools.engines import get_engine

    info = build_pyserini(corpus=corpus, out_dir=tmp_path / "ray_blocks", engine=get_engine("ray"), block_rows=40)
    assert (info["blocks"], info["num_paragraphs"]) == (4, 150)
    assert lucene_hits(tmp_path / "ray_blocks", corpus) == ref
    # The R2VC retriever's own missing-index build on the engine (`baseline r2vc --engine ray`).
    from averitec_tools.baselines.r2vc.stages.retrieval import build_retriever

    build_retriever(corpus=str(corpus), sparse="pyserini", dense_model=None, index_dir=tmp_path / "r2vc",
                    engine=get_engine("ray"))
    assert lucene_hits(tmp_path / "r2vc" / "pyserini", corpus) == ref


_JVM_THEN_RAY = """
import ctypes, signal
from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import lucene_analyze
from averitec_tools.engines.ray_runtime import ensure_ray
assert lucene_analyze("Cats purr") == ["cat", "purr"]  # the JVM is running
libc = ctypes.CDLL(None)
def handler():
    action = ctypes.create_string_buffer(512)
    assert libc.sigaction(int(signal.SIGSEGV), None, action) == 0
    return action.raw[:8]  # sa_handler / sa_sigaction
before = handler()
ray = ensure_ray(num_cpus=1)
after = handler()
ray.shutdown()
assert before == after, (before.hex(), after.hex())
"""


@pytest.mark.java
def test_ray_started_after_the_jvm_keeps_the_jvms_segv_handler(ray_runtime: object) -> None:
    """ray.init replaces SIGSEGV's handler (a pyserini JVM started earlier then crashes); ensure_ray restores it."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _JVM_THEN_RAY], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


class _DiesOnce:
    """Worker factory whose first worker process exits hard in its first batch."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __call__(self):  # type: ignore[no-untyped-def]
        marker = Path(self.marker)

        def run(items: list[int]) -> list[int]:
            if not marker.exists():
                marker.write_text(str(os.getpid()))
                os._exit(1)  # the worker process dies mid-job
            return [x * 10 for x in items]

        return run


def test_killed_worker_is_retried_and_output_complete(tmp_path: Path, ray_runtime: object) -> None:
    import sys

    from ray import cloudpickle

    from averitec_tools.engines import get_engine

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import test modules
    out = list(get_engine("ray").map_batches(list(range(12)), worker=_DiesOnce(str(tmp_path / "died")),
                                             batch_size=4))
    assert (tmp_path / "died").exists()
    assert out == [x * 10 for x in range(12)]


def test_r2vc_cli_identical_on_both_engines(tmp_path: Path, ray_runtime: object,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Each engine builds its own corpus's missing indexes (on Ray: through the engine)."""
    import json
    import shutil

    from averitec_tools.baselines.r2vc.corpus.store import build_corpus
    from averitec_tools.baselines.r2vc.stages.retrieval.engine_build import DENSE_SHARDS
    from averitec_tools.cli.main import main
    from tests._r2vc_helpers import save_tiny_nli_model, tiny_claims, tiny_passages

    build_corpus(passages=tiny_passages(), out_dir=tmp_path / "corpus_local")
    shutil.copytree(tmp_path / "corpus_local", tmp_path / "corpus_ray")  # same fingerprint, no indexes yet
    model = save_tiny_nli_model(tmp_path / "nli")
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text("retrieval:\n  sparse: bm25s\n  dense_model: minilm\n"
                   f"verifier:\n  model: {model}\n  device: cpu\n"
                   "generator:\n  k: 4\nablation:\n  nli_only: true\n  no_calibration: true\n"
                   "calibration:\n  tau_cal: 0.0\n  tau_ver: -1.0\n")
    claims = tmp_path / "claims.json"
    claims.write_text(json.dumps(tiny_claims()))
    outs = {}
    for engine in ("local", "ray"):
        out = tmp_path / f"pred_{engine}.json"
        code = main(["baseline", "r2vc", "--config", str(cfg), "--claims", str(claims), "--corpus",
                     str(tmp_path / f"corpus_{engine}"), "--out", str(out), "--json", "--engine", engine])
        stdout, err = capsys.readouterr()
        assert code == 0, err
        summary = json.loads(stdout)
        assert summary["engine"]["engine"] == engine
        builds = summary["components"]["retrieval"].get("index_builds")
        assert builds == ({"bm25s": "built on engine ray", "dense": "built on engine ray"} if engine == "ray" else None)
        outs[engine] = out.read_bytes()
    assert outs["local"] == outs["ray"]
    assert len(json.loads(outs["ray"])) == len(tiny_claims())
    indexes = {e: tree_digest(tmp_path / f"corpus_{e}" / "indexes") for e in ("local", "ray")}
    assert sorted(k for k in indexes["ray"] if k.startswith(DENSE_SHARDS)) == [
        f"{DENSE_SHARDS}/manifest.json", f"{DENSE_SHARDS}/shard-00000.npy"]  # built on the engine
    assert not (tmp_path / "corpus_local" / "indexes" / DENSE_SHARDS).exists()
    assert {k: v for k, v in indexes["ray"].items() if not k.startswith(DENSE_SHARDS)} == indexes["local"]
    assert {k.split("/")[0] for k in indexes["local"]} == {"bm25s", "dense"}


@pytest.mark.slow
def test_averitec_baseline_identical_on_both_engines(tmp_path: Path, ray_runtime: object,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import yaml
    from _averitec_baseline_fixtures import claims, tiny_models, write_json

    from averitec_tools.cli.main import main

    models = tiny_models(tmp_path)
    train = write_json(tmp_path / "train.json", claims("train", 12))
    dev = write_json(tmp_path / "dev.json", claims("dev", 4))
    assert main(["baseline", "averitec", "build-store", "--claims", str(dev), "--out", str(tmp_path / "store"),
                 "--distractors", "3", "--json"]) == 0
    small = {"max_pairs": 24, "epochs": 1, "batch_size": 8, "max_length": 48, "heldout": 0.2, "device": "cpu"}
    cfg = {"base": "offline-minilm", "data": {"train": str(train), "cache_dir": str(tmp_path / "cache")},
           "questions": {"model": str(models["bloom"]), "batch_size": 4, "max_new_tokens": 6, "few_shot": 2},
           "reranker": {"base": str(models["bert"]), "train": small},
           "verdict": {"base": str(models["bert"]), "train": small},
           "justification": {"model": "extractive-fallback"},
           # 12 training claims leave no slice to fit the claim head on (tests/test_averitec_claim_head.py
           # runs it); the engines' parity is the point here
           "decision": {"head": "none"}}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    capsys.readouterr()
    outs = {}
    for engine in ("local", "ray"):
        out = tmp_path / f"preds_{engine}.json"
        code = main(["baseline", "averitec", "--config", str(tmp_path / "cfg.yaml"), "--claims", str(dev),
                     "--store", str(tmp_path / "store"), "--out", str(out), "--json", "--engine", engine,
                     "--no-stage-cache"])  # both engines compute every stage
        stdout, err = capsys.readouterr()
        assert code == 0, err
        assert json.loads(stdout)["engine"]["engine"] == engine
        outs[engine] = out.read_bytes()
    assert outs["local"] == outs["ray"]
    assert [p["claim_id"] for p in json.loads(outs["ray"])] == [0, 1, 2, 3]


def test_wikipedia_corpus_identical_between_engines_and_bad_line_named(
        tmp_path: Path, ray_runtime: object, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from averitec_tools.baselines.r2vc.corpus.wikipedia import build_corpus_from_wikipedia
    from averitec_tools.cli.main import main

    dump = tmp_path / "dump" / "AA"
    dump.mkdir(parents=True)
    for f in range(3):
        with (dump / f"wiki_0{f}").open("w") as fh:
            for a in range(4):
                art = {"id": f"{f}{a}", "title": f"T{f}{a}", "url": f"u{f}{a}",
                       "text": f"T{f}{a}\n\nFirst paragraph {f}{a}.\nSecond paragraph {f}{a}."}
                fh.write(json.dumps(art) + "\n")
    ref = build_corpus_from_wikipedia(path=tmp_path / "dump", out_dir=tmp_path / "ref")
    for engine in ("local", "ray"):
        code = main(["index", "corpus", "--wikipedia", str(tmp_path / "dump"), "--out", str(tmp_path / engine),
                     "--engine", engine, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert json.loads(out)["num_paragraphs"] == len(ref) == 24
        # The data file is identical; the fingerprint's content part too (its last part is
        # a random build id by design: every build of a store is a new corpus for indexes).
        assert tree_digest(tmp_path / engine)["paragraphs.arrow"] == tree_digest(tmp_path / "ref")["paragraphs.arrow"]
        meta = json.loads((tmp_path / engine / "corpus.json").read_text())
        assert meta["fingerprint"].rsplit("-", 1)[0] == ref.fingerprint.rsplit("-", 1)[0]
    with (dump / "wiki_01").open("a") as fh:
        fh.write("[1, 2]\n")
    code = main(["index", "corpus", "--wikipedia", str(tmp_path / "dump"), "--out", str(tmp_path / "bad"),
                 "--engine", "ray"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines()[0].endswith("wiki_01:5: expected a Wikipedia article object with id/title/text")
    assert not (tmp_path / "bad").exists()
