"""Sharded, resumable dense encoding of a paragraph store, on any engine.

The corpus is cut into shards of consecutive rows (``shard_size``, default the
8192-paragraph chunk of Table G.1, so each shard is encoded exactly as
:meth:`~averitec_tools.baselines.r2vc.stages.retrieval.dense.DenseRetriever.build` encodes a
chunk and the vectors are the same). Each shard is one work item: a worker (an encoder
actor under ``--engine ray``, holding the model for its whole life) reads its rows from
the memory-mapped store, encodes them (L2-normalised float32) and writes
``shard-NNNNN.npy`` atomically; the driver records the file's SHA-256 in
``manifest.json`` after every shard. A restarted job skips every shard whose file
matches the manifest, so a killed job resumes where it stopped; a retried shard simply
overwrites its file. The driver only ever holds one shard's record.

Example:
    >>> shard_specs(num_rows=20000, shard_size=8192)
    [(0, 0, 8192), (1, 8192, 16384), (2, 16384, 20000)]
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.hashing import file_sha256
from averitec_tools.jsonio import atomic_writer

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
#: Default rows per shard (Table G.1's encoding chunk).
SHARD_SIZE = 8192


def shard_specs(*, num_rows: int, shard_size: int) -> list[tuple[int, int, int]]:
    """``(shard, start, stop)`` row ranges covering ``num_rows`` rows.

    Raises:
        UserError: ``shard_size`` is below 1.
    """
    if shard_size < 1:
        raise UserError(f"block size must be at least 1, got {shard_size}")
    return [(i, start, min(start + shard_size, num_rows))
            for i, start in enumerate(range(0, num_rows, shard_size))]


def shard_file(index: int) -> str:
    """File name of shard ``index``."""
    return f"shard-{index:05d}.npy"


def rebuild_command(*, corpus: str, shards: str, model: str) -> str:
    """The command that re-encodes missing or corrupt shards (and only those)."""
    return f"averitec index dense --corpus {corpus} --shards {shards} --model {model} --resume --out INDEX_DIR"


@dataclass(frozen=True)
class EncodeWorker:
    """Picklable worker factory: loads the encoder and the store once per worker.

    Calling it returns a function from ``(shard, start, stop)`` items to shard records.
    """

    corpus: str
    out_dir: str
    model: str
    device: str | None = None
    batch_size: int = 64
    include_title: bool = True

    def __call__(self) -> Callable[[list[Any]], list[dict[str, Any]]]:
        import numpy as np

        from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore, index_text
        from averitec_tools.baselines.r2vc.stages.retrieval.dense import _encode
        from averitec_tools.models import load_sentence_encoder

        store = ParagraphStore.open(self.corpus)
        encoder, _ = load_sentence_encoder(model=self.model, device=self.device)
        out = Path(self.out_dir)

        def run(items: list[Any]) -> list[dict[str, Any]]:
            records = []
            for index, start, stop in items:
                texts = [index_text(p, include_title=self.include_title)
                         for p in store.passages(range(start, stop))]
                vectors = _encode(encoder, texts, batch_size=self.batch_size)
                path = out / shard_file(index)
                tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
                with tmp.open("wb") as fh:
                    np.save(fh, vectors)
                os.replace(tmp, path)
                records.append({"shard": index, "file": path.name, "start": start, "stop": stop,
                                "dim": int(vectors.shape[1]), "sha256": file_sha256(path)})
            return records

        return run


def _header(*, store: Any, model_id: str, shard_size: int, include_title: bool) -> dict[str, Any]:
    return {"manifest_version": MANIFEST_VERSION, "model_id": model_id,
            "corpus_fingerprint": store.fingerprint, "num_paragraphs": len(store),
            "shard_size": shard_size, "include_title": include_title,
            "num_shards": len(shard_specs(num_rows=len(store), shard_size=shard_size))}


def read_manifest(shards_dir: Path) -> dict[str, Any] | None:
    """The manifest in ``shards_dir`` (``None`` if there is none)."""
    path = shards_dir / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        manifest["shards"] = {int(k): v for k, v in manifest["shards"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UserError(f"{path}: corrupt shard manifest ({exc})",
                        hint=f"delete {shards_dir} and encode again") from None
    return manifest  # type: ignore[no-any-return]


def _write_manifest(shards_dir: Path, manifest: dict[str, Any]) -> None:
    with atomic_writer(shards_dir / MANIFEST) as fh:
        json.dump({**manifest, "shards": {str(k): v for k, v in sorted(manifest["shards"].items())}},
                  fh, indent=1)


def shard_ok(shards_dir: Path, record: dict[str, Any]) -> bool:
    """Whether a finished shard's file is present and matches its recorded SHA-256."""
    path = shards_dir / record["file"]
    return path.is_file() and file_sha256(path) == record["sha256"]


def _finished_shards(out: Path, header: dict[str, Any], *, resume: bool) -> dict[Any, Any]:
    """The shards of ``out``'s manifest still on disk as recorded (none without ``resume``).

    Raises:
        UserError: the manifest is another encoding job's (another corpus, model, shard size).
    """
    old = read_manifest(out) if resume else None
    if old is not None and {k: old.get(k) for k in header} != header:
        diff = sorted(k for k in header if old.get(k) != header[k])
        raise UserError(f"{out}: holds shards of another encoding job (differs in {', '.join(diff)})",
                        hint=f"use another --shards directory or delete {out}")
    return {i: r for i, r in (old or {}).get("shards", {}).items() if shard_ok(out, r)}


def encode_corpus(
    *,
    corpus: str | os.PathLike[str],
    shards_dir: str | os.PathLike[str],
    model: str,
    engine: Any = None,
    shard_size: int = SHARD_SIZE,
    batch_size: int = 64,
    include_title: bool = True,
    device: str | None = None,
    resume: bool = True,
    on_shard: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Encode every paragraph of the store at ``corpus`` into shards (see module docs).

    Args:
        corpus: Paragraph store directory.
        shards_dir: Where the shards and ``manifest.json`` go.
        model: Sentence encoder (``minilm``, a local directory or a cached hub id).
        engine: An :mod:`averitec_tools.engines` engine (default: local).
        shard_size: Rows per shard.
        batch_size: Encoder batch size.
        include_title: Encode ``title\\ntext`` (as the dense retriever does).
        device: Torch device of the encoders.
        resume: Keep finished shards that match the manifest (else start over).
        on_shard: Called with the shards finished in this run (tests simulate a killed job).

    Returns:
        The manifest, with ``encoded`` and ``skipped`` shard counts of this run.

    Raises:
        UserError: The shards directory holds another corpus's or model's shards.
    """
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.engines import get_engine
    from averitec_tools.models import resolve_model

    if shard_size < 1:
        raise UserError(f"shard size must be at least 1, got {shard_size}")
    engine = engine or get_engine("local")
    store = ParagraphStore.open(corpus)
    resolved = resolve_model(model=model)
    out = Path(shards_dir)
    out.mkdir(parents=True, exist_ok=True)
    header = _header(store=store, model_id=resolved.model_id, shard_size=shard_size, include_title=include_title)
    done = _finished_shards(out, header, resume=resume)
    skipped = len(done)
    manifest = {**header, "shards": dict(done)}
    _write_manifest(out, manifest)
    todo = [s for s in shard_specs(num_rows=len(store), shard_size=shard_size) if s[0] not in done]
    encoded = 0
    for record in engine.map_batches(todo, worker=EncodeWorker(
            corpus=str(corpus), out_dir=str(out), model=model, device=device, batch_size=batch_size,
            include_title=include_title), batch_size=1):
        manifest["shards"][int(record["shard"])] = record
        _write_manifest(out, manifest)
        encoded += 1
        if on_shard is not None:
            on_shard(encoded)
    return {**manifest, "encoded": encoded, "skipped": skipped}


__all__ = ["encode_corpus", "read_manifest", "rebuild_command", "shard_file", "shard_ok", "shard_specs"]
