"""R2VC stage 7: sequence-level calibration (π), the abstention decision (paper §3.5) and the
claim-level Conflicting rule (ours, ``claim_rules``)."""
