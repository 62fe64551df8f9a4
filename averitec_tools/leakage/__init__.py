"""leakage."""
