"""Alembic migrations of the leaderboard store (shipped as package data)."""
