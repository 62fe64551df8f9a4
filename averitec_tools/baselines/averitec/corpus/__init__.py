"""AVeriTeC stage 1: the per-claim knowledge store every retrieval reads (``store``), in the
2024 shared-task layout, and its builder from gold annotation."""
