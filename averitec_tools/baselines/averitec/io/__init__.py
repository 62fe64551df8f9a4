"""The files at both ends of an AVeriTeC baseline run: claims and their QA pairs in (``data``),
predictions out in the two formats (``output``), and the per-claim stage cache (``stage_cache``)."""
