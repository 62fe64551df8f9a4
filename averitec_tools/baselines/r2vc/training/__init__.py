"""Stage 9: SFT and DPO training of the R2VC generator (paper §3.3, Table G.1).

``python -m averitec_tools.baselines.r2vc.training sft|dpo --config C.yaml --data D.jsonl
--out DIR`` runs either stage; the modules import torch/transformers/trl lazily.
"""
