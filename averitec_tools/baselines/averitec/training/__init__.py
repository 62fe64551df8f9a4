"""Fitting the AVeriTeC baseline on the training split: the fine-tuned classifiers
(``classifier``) and justification model (``justification``), the checkpoint each stage uses
(``checkpoints``, ``upstream_checkpoints``), the decision slice (``decision_slice``) and the
proof that no scored label reaches a fit (``leak_guard``)."""
