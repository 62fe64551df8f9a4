"""Experiments on top of the AVeriTeC baseline: data to table in one command (``reproduce``),
its plan before anything runs (``plan``) and the organisers' shipped checkpoints in this
pipeline (``upstream``)."""
