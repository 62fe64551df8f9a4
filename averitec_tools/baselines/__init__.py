"""Reference baselines. ``r2vc``: retrieve → reason → verify → calibrate (Dixit & Pandey)."""
