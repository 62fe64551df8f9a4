"""R2VC stage 7: sequence-level calibration (π) and the abstention decision (paper §3.5)."""
