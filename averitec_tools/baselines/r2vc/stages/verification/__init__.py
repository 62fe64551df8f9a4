"""R2VC stage 6: NLI verification of the candidates (paper §3.4): the NLI model and the verifier."""
