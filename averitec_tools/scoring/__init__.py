"""The scorer: submission formats and parsing, scoring profiles (one module per official
scorer), lenient mode, format conversion, subsets, and the METEOR engine they share.

``averitec score``, ``compare``, ``calibration``, ``convert`` and ``judge-agreement`` use
this package directly; the hosted competition (:mod:`averitec_tools.leaderboard`) is one
application of it and imports it, never the other way round.
"""


def __getattr__(name: str) -> object:
    """``averitec_tools.scoring.BatchScorer``, imported on first use (the package stays light)."""
    if name == "BatchScorer":
        from averitec_tools.scoring.batch import BatchScorer

        return BatchScorer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
