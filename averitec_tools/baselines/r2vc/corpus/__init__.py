"""R2VC stage 1: the paragraph store behind every retriever (``store``) and its builders from
JSONL, WikiExtractor dumps (``wikipedia``) and the FEVER wiki-pages (``fever_wiki``)."""
