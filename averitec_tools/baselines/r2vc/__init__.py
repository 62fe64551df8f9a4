"""The R2VC pipeline (Dixit & Pandey): hybrid retrieval → candidate generation →
NLI verification → sequence-level calibration and abstention. One module per stage."""
