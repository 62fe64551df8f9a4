"""The AVeriTeC reference baseline: knowledge store → BM25 sentences → evidence questions →
reranker → verdict → justification (``averitec baseline averitec``). One module per stage."""
