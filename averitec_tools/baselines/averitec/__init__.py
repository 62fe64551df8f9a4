"""The AVeriTeC reference baseline: knowledge store → BM25 sentences → evidence questions →
reranker → verdict → justification (``averitec baseline averitec``), in wings layered as
R2VC's: ``corpus`` (the knowledge store), ``io`` (claims in, predictions out, the stage
cache), ``stages`` (one module per stage), the run (``pipeline``, ``reporting``),
``training`` (checkpoints and the decision slice), the assembly (``build``,
``claim_worker``), ``experiments`` (reproduce, plan, the upstream route) and ``run.py``."""
