"""The R2VC pipeline stages, in the order a claim meets them: ``retrieval`` (the evidence pool),
``generation`` (k candidate verdicts), ``verification`` (NLI scores), ``calibration`` (π and the
abstention decision); ``questions`` writes the evidence questions of an AVeriTeC output."""
