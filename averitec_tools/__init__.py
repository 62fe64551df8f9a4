"""averitec-tools: load, score, audit and reproduce fact-checking benchmarks.

Importing the package is deliberately cheap: heavy dependencies (torch, transformers,
datasets, faiss, pyserini) are imported inside the functions that need them.
"""

from averitec_tools._version import __version__

__all__ = ["__version__"]
