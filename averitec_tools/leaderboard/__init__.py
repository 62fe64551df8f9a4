"""The hosted competition: store, database, queue, workers, ranking, export and web app.

Scoring itself lives in :mod:`averitec_tools.scoring`, which this package imports.
"""
