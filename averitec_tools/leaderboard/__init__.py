"""Submission validation and scoring profiles (one module per official scorer)."""
