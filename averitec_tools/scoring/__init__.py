"""The scorer: submission formats and parsing, scoring profiles (one module per official
scorer), lenient mode, format conversion, subsets, and the METEOR engine they share.

``averitec score``, ``compare``, ``calibration``, ``convert`` and ``judge-agreement`` use
this package directly; the hosted competition (:mod:`averitec_tools.leaderboard`) is one
application of it and imports it, never the other way round.
"""
