"""Reference baselines: ``r2vc`` (retrieve → reason → verify → calibrate) and ``averitec``."""
