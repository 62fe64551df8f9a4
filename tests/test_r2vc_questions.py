"""The R2VC question writer (stages/questions.py): an LM's question, or the template where it writes none."""

from __future__ import annotations

from averitec_tools.baselines.r2vc.stages.questions import fallback_question
from tests._r2vc_helpers import tiny_passages


def test_lm_question_writer_uses_model_output_or_falls_back() -> None:
    import torch

    from averitec_tools.baselines.r2vc.stages.questions import LMQuestionWriter

    replies = iter(["Who won the zorb cup in 2020?\nextra", "not a question"])

    class Enc(dict):
        def to(self, device):
            return self

    class Tok:
        pad_token_id = 0

        def apply_chat_template(self, messages, tokenize, add_generation_prompt):
            assert messages[-1]["role"] == "user" and "Evidence:" in messages[-1]["content"]
            return "PROMPT " + messages[-1]["content"]

        def __call__(self, text, return_tensors, return_token_type_ids=True, add_special_tokens=True):
            # the chat template wrote the begin-of-text token: a second one must not be added
            assert add_special_tokens is False
            return Enc(input_ids=torch.ones((1, 3), dtype=torch.long))

        def decode(self, ids, skip_special_tokens):
            assert ids.tolist() == [7, 7]  # only the generated continuation is decoded
            return next(replies)

    class Model:
        device = "cpu"

        def generate(self, **kwargs):
            assert kwargs["do_sample"] is False
            return torch.tensor([[1, 1, 1, 7, 7]])

    writer = LMQuestionWriter(model=Model(), tokenizer=Tok())
    qs = writer.write(claim="Zorbland won the zorb cup.", passages=tiny_passages()[:2])
    assert qs == ["Who won the zorb cup in 2020?", fallback_question("Zorbland won the zorb cup.")]
    assert writer.n_fallback == 1  # counted: the run summary reports it as template_question
