"""The offline ``offline-minilm`` configuration as a preset: its data (``data``), the build of its
pipeline (``preset``), its fitted thresholds and gates (``fit``), the claim-level rules fitted on the
calibration slice (``rules``) and the gold-evidence oracle (``gold``)."""
