"""R2VC stage 6: NLI verification of the candidates (paper §3.4): the verifier, its signals and
thresholds per evidence regime (``regimes``); the NLI backends are :mod:`averitec_tools.nli`."""
