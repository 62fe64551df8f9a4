"""Stage 9: SFT and DPO training of the R2VC generator (paper §3.3, Table G.1).

``averitec baseline r2vc train sft|dpo --config C.yaml --data D.jsonl --out DIR`` (or
``python -m averitec_tools.baselines.r2vc.training sft|dpo ...``) runs either stage through
:func:`~averitec_tools.baselines.r2vc.training.run.train_stage`; the modules import
torch/transformers/trl lazily.
"""
