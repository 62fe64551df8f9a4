"""The files at both ends of an R2VC run: claim input (``claims``), a claim's own evidence
(``given_evidence``), the output formats (``formats``) and the candidate store (``candidates``)."""
