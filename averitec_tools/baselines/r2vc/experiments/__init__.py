"""Experiments on top of the R2VC pipeline: the paper reproduction (``paper``, ``tables``,
``recipes``), the ablation rows (``ablations``) and the calibration slice (``calibration_slice``)."""
