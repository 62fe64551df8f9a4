"""baselines/averitec."""
