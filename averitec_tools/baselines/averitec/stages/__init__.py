"""The AVeriTeC baseline's stages, in the order a claim meets them: ``retrieval`` (BM25
sentences over the ``bm25`` backends), ``questions``, ``reranker``, ``verdict`` (with the
``decision`` rules: the reranker choice and the label offsets) and ``justification``."""
