"""The offline ``offline-minilm`` configuration as a preset: its data (``data``), the build of its
pipeline (``preset``), its fitted thresholds and gates (``fit``) and the gold-evidence oracle (``gold``)."""
