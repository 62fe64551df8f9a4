"""R2VC stage 5: the k candidate verdicts of a claim (paper §3.3): the LM generator, its prompt,
decoding and sampling, output parsing, and the NLI-only fallback generator."""
