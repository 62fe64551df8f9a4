"""R2VC generator (stage 5): output parsing, evidence subsets, decoding bank, HF generation."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from averitec_tools.baselines.r2vc.stages.generation.generator import (
    DECODING_BANK,
    DecodingConfig,
    HFGenerator,
    MalformedOutputError,
    PerRowTemperatureTopP,
    RawOutput,
    load_causal_lm,
    parse_candidate,
    sample_evidence_subsets,
    select_device_dtype,
)
from averitec_tools.baselines.r2vc.types import Generator, Passage
from averitec_tools.errors import ResourceError, UserError

P3 = tuple(Passage(doc_id=f"d{i}", title=f"T{i}", url="", text=f"text {i}") for i in range(3))


def _pool(n: int) -> list[Passage]:
    return [Passage(doc_id=f"d{i}", title=f"Page {i}", url=f"u{i}", text=f"fact number {i}") for i in range(n)]


# ----------------------------------------------------------------------------- parser


@pytest.mark.parametrize(
    ("text", "label", "rationale", "citations"),
    [
        ("True. Because it is 330 m tall [1].", "True", "Because it is 330 m tall.", (0,)),
        ("False. Because it opened in 1932 [2, 3].", "False", "Because it opened in 1932.", (1, 2)),
        ("Uncertain. Because nothing says so.", "Uncertain", "Because nothing says so.", ()),
        # What a lower-casing WordPiece tokenizer decodes to.
        ("true. because it is tall [ 1 ] [ 3 ].", "True", "because it is tall.", (0, 2)),
        ("**FALSE**: wrong year [3][1][3]", "False", "wrong year", (2, 0)),
        ("SUPPORTS. The page says so [2].", "True", "The page says so.", (1,)),
        ("Refuted - see [1]", "False", "see", (0,)),
        ("Not enough info. Nothing relevant.", "Uncertain", "Nothing relevant.", ()),
        (
            '{"label": "False", "rationale": "Opened in 1932 [2].", "citations": [3]}',
            "False",
            "Opened in 1932.",
            (2, 1),
        ),
        ('```json\n{"verdict": "true", "justification": "ok", "citations": ["[1]"]}\n```', "True", "ok", (0,)),
        ("Label: Uncertain\nRationale: The evidence\nis silent.\nCitations: [1, 2]", "Uncertain", "The evidence is silent.", (0, 1)),
        ("Verdict = False\nExplanation: contradicted [3].", "False", "contradicted.", (2,)),
        ("Sure.\nAnswer: True. Because it is listed [2].", "True", "Because it is listed.", (1,)),
        ("Label: False - wrong date\nCitations: 1, 3", "False", "wrong date", (0, 2)),
    ],
)
def test_parse_valid_outputs(text: str, label: str, rationale: str, citations: tuple[int, ...]) -> None:
    cand = parse_candidate(text, passages=P3, mean_logprob=-1.5, config_index=7)
    assert (cand.label, cand.rationale, cand.citations) == (label, rationale, citations)
    assert cand.passages == P3
    assert (cand.mean_logprob, cand.config_index, cand.raw_text) == (-1.5, 7, text)


@pytest.mark.parametrize(
    ("text", "citations"),
    [
        ("True. Because [0] and [4] and [2].", (1,)),  # 0 and 4 are outside 1..3
        ("False. Because [17].", ()),
        ('{"label": "True", "rationale": "r", "citations": [0, 9, -1, true, 2]}', (1,)),
    ],
)
def test_out_of_range_citations_are_dropped(text: str, citations: tuple[int, ...]) -> None:
    assert parse_candidate(text, passages=P3).citations == citations


def test_citations_with_empty_evidence_are_all_dropped() -> None:
    cand = parse_candidate("Uncertain. No evidence [1].", passages=())
    assert cand.citations == () and cand.cited_passages == ()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n ",
        "I think the claim might be right.",
        "Truely so [1].",  # not the word "True"
        "The claim is true [1].",  # label must come first
        '{"label": "Maybe", "rationale": "r"}',
        "Label: Perhaps\nRationale: r",
        "[1] [2] [3]",
    ],
)
def test_malformed_outputs_raise(text: str) -> None:
    with pytest.raises(MalformedOutputError, match="no True/False/Uncertain label"):
        parse_candidate(text, passages=P3)


# ----------------------------------------------------------------------------- subsets and bank


@pytest.mark.parametrize(("n", "expected_size"), [(0, 0), (1, 1), (5, 5), (16, 16), (24, 16), (200, 16)])
def test_subset_sizes_are_min_16_and_pool(n: int, expected_size: int) -> None:
    subsets = sample_evidence_subsets(n_passages=n, k=16, seed=3)
    assert len(subsets) == 16
    for subset in subsets:
        assert len(subset) == expected_size
        assert len(set(subset)) == expected_size
        assert all(0 <= i < n for i in subset)


def test_subsets_are_seeded() -> None:
    a = sample_evidence_subsets(n_passages=24, k=16, seed=11)
    assert a == sample_evidence_subsets(n_passages=24, k=16, seed=11)
    assert a != sample_evidence_subsets(n_passages=24, k=16, seed=12)
    assert len(set(a)) > 1  # candidates see different evidence mixtures


def test_subset_arguments_are_validated() -> None:
    with pytest.raises(ValueError):
        sample_evidence_subsets(n_passages=3, k=0, seed=0)
    with pytest.raises(ValueError):
        sample_evidence_subsets(n_passages=3, k=2, seed=0, subset_size=0)


def test_decoding_bank_has_16_distinct_valid_configurations() -> None:
    assert len(DECODING_BANK) == 16
    assert len(set(DECODING_BANK)) == 16
    assert all(c.temperature > 0 and 0 < c.top_p <= 1 for c in DECODING_BANK)
    assert DECODING_BANK[0] == min(DECODING_BANK, key=lambda c: (c.temperature, c.top_p))


def test_per_row_warper_matches_transformers_warpers_row_by_row() -> None:
    import torch
    from transformers import TemperatureLogitsWarper, TopPLogitsWarper

    torch.manual_seed(0)
    scores = torch.randn(len(DECODING_BANK), 50) * 3
    ids = torch.zeros(len(DECODING_BANK), 1, dtype=torch.long)
    ours = PerRowTemperatureTopP(
        temperatures=[c.temperature for c in DECODING_BANK], top_ps=[c.top_p for c in DECODING_BANK]
    )(ids, scores.clone())
    for row, config in enumerate(DECODING_BANK):
        ref = TemperatureLogitsWarper(config.temperature)(ids[row : row + 1], scores[row : row + 1].clone())
        ref = TopPLogitsWarper(config.top_p)(ids[row : row + 1], ref)
        assert torch.equal(torch.isinf(ours[row]), torch.isinf(ref[0]))
        finite = ~torch.isinf(ref[0])
        assert torch.allclose(ours[row][finite], ref[0][finite])


def test_per_row_warper_rejects_bad_values() -> None:
    with pytest.raises(ValueError):
        PerRowTemperatureTopP(temperatures=[0.0], top_ps=[0.9])
    with pytest.raises(ValueError):
        PerRowTemperatureTopP(temperatures=[1.0], top_ps=[0.0])
    with pytest.raises(ValueError):
        PerRowTemperatureTopP(temperatures=[1.0, 1.0], top_ps=[0.9])


# ----------------------------------------------------------------------------- generation (scripted)


class ScriptedGenerator(HFGenerator):
    """HFGenerator whose decoding is replaced by scripted outputs (records the prompts)."""

    def __init__(self, outputs: Sequence[str]) -> None:
        from _r2vc_tiny import tiny_tokenizer

        self._setup(
            model=None,
            tokenizer=tiny_tokenizer(),
            name="scripted",
            max_new_tokens=160,
            subset_size=16,
            decoding_bank=DECODING_BANK,
            batch_size=16,
        )
        self.outputs = list(outputs)
        self.calls: list[tuple[list[str], list[DecodingConfig], int]] = []

    def _sample(self, *, prompts, configs, seed):  # type: ignore[no-untyped-def]
        self.calls.append((list(prompts), list(configs), seed))
        return [RawOutput(text=self.outputs[i % len(self.outputs)], mean_logprob=-0.5) for i in range(len(prompts))]


def test_generate_counts_unparseable_outputs_as_uncertain_candidates() -> None:
    gen = ScriptedGenerator(["True. Yes [1].", "gibberish", "False. No [2].", ""])
    result = gen.generate("claim", _pool(24), k=16, seed=0)
    assert isinstance(gen, Generator)
    assert result.n_malformed == 8
    assert [c.label for c in result.candidates] == ["True", "Uncertain", "False", "Uncertain"] * 4
    assert [c.config_index for c in result.candidates] == list(range(16))
    bad = [c for c in result.candidates if c.label == "Uncertain"]
    assert all(c.rationale == "" and c.citations == () for c in bad)
    assert [c.raw_text for c in bad] == ["gibberish", ""] * 4
    assert all(len(c.passages) == 16 for c in result.candidates)
    assert all(c.mean_logprob == -0.5 for c in result.candidates)


def test_generate_uses_one_bank_entry_per_candidate_and_the_sampled_subsets() -> None:
    pool = _pool(20)
    gen = ScriptedGenerator(["True. ok [1]."])
    result = gen.generate("claim", pool, k=20, seed=5)
    prompts, configs, seed = gen.calls[0]
    assert seed == 5 and len(prompts) == 20
    assert configs == [DECODING_BANK[i % 16] for i in range(20)]
    assert [c.config_index for c in result.candidates] == [i % 16 for i in range(20)]
    subsets = sample_evidence_subsets(n_passages=20, k=20, seed=5)
    for cand, subset, prompt in zip(result.candidates, subsets, prompts, strict=True):
        assert cand.passages == tuple(pool[i] for i in subset)
        assert cand.cited_passages == (pool[subset[0]],)
        assert f"[1] Page {subset[0]}: fact number {subset[0]}" in prompt
        assert "[17]" not in prompt


def test_generate_with_small_and_empty_pools() -> None:
    gen = ScriptedGenerator(["Uncertain. Not enough [1]."])
    small = gen.generate("claim", _pool(3), k=4, seed=0)
    assert [len(c.passages) for c in small.candidates] == [3, 3, 3, 3]
    empty = gen.generate("claim", [], k=2, seed=0)
    assert [(c.passages, c.citations) for c in empty.candidates] == [((), ()), ((), ())]
    assert "(no evidence retrieved)" in gen.calls[-1][0][0]


# ----------------------------------------------------------------------------- generation (tiny real LM)


@pytest.fixture(scope="module")
def tiny_generator() -> HFGenerator:
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    tok = tiny_tokenizer()
    return HFGenerator.from_model(model=tiny_lm(tok), tokenizer=tok, max_new_tokens=12)


@pytest.mark.slow
def test_tiny_lm_generation_is_reproducible_under_a_seed(tiny_generator: HFGenerator) -> None:
    pool = _pool(5)
    first = tiny_generator.generate("the sky is blue", pool, k=16, seed=1)
    again = tiny_generator.generate("the sky is blue", pool, k=16, seed=1)
    assert first == again
    assert len(first.candidates) == 16 and first.n_malformed <= 16

    prompts = ["<|user|>\nhello there\n<|assistant|>\n"] * 4
    configs = list(DECODING_BANK[12:16])
    a = tiny_generator._sample(prompts=prompts, configs=configs, seed=7)
    b = tiny_generator._sample(prompts=prompts, configs=configs, seed=7)
    c = tiny_generator._sample(prompts=prompts, configs=configs, seed=8)
    assert a == b
    assert [o.text for o in a] != [o.text for o in c]
    assert len({o.text for o in a}) > 1  # sampled, not greedy


def test_mean_logprob_matches_a_teacher_forced_forward_pass(tiny_generator: HFGenerator) -> None:
    import torch

    gen = HFGenerator.from_model(
        model=tiny_generator.model, tokenizer=tiny_generator.tokenizer, max_new_tokens=6, batch_size=1
    )
    tok = gen.tokenizer
    prompt = "<|user|>\nis water wet?\n<|assistant|>\n"
    (out,) = gen._sample(prompts=[prompt], configs=[DecodingConfig(temperature=1.0, top_p=1.0)], seed=3)
    assert out.mean_logprob is not None and out.mean_logprob < 0

    # Re-derive: sample again with the same seed, keeping the token ids, then score them.
    enc = tok([prompt], return_tensors="pt", add_special_tokens=False, return_token_type_ids=False)
    torch.manual_seed(3)
    from transformers import GenerationConfig

    seq = gen.model.generate(
        **enc,
        generation_config=GenerationConfig(
            do_sample=True, temperature=1.0, top_p=1.0, top_k=0, max_new_tokens=6,
            pad_token_id=tok.pad_token_id, eos_token_id=gen._eos_ids(),
        ),
    )
    new = seq[0, enc["input_ids"].shape[1] :]
    with torch.no_grad():
        logits = gen.model(seq).logits[0, enc["input_ids"].shape[1] - 1 : -1]
    logprobs = logits.log_softmax(-1).gather(-1, new[:, None])[:, 0]
    eos = [i for i, t in enumerate(new.tolist()) if t in gen._eos_ids()]
    n = eos[0] + 1 if eos else len(new)
    assert math.isclose(out.mean_logprob, float(logprobs[:n].mean()), rel_tol=1e-4, abs_tol=1e-5)
    assert out.text == tok.decode(new[: eos[0] if eos else n], skip_special_tokens=True).strip()


# ----------------------------------------------------------------------------- loading


def test_generator_loads_a_saved_local_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    tok = tiny_tokenizer()
    tiny_lm(tok).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    gen = HFGenerator(str(tmp_path), device="cpu", max_new_tokens=4)
    assert gen.name == f"hf:{tmp_path}"
    result = gen.generate("claim", _pool(2), k=2, seed=0)
    assert len(result.candidates) == 2


def test_missing_local_model_is_a_resource_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ResourceError, match=r"cannot load causal LM .*no config.json"):
        load_causal_lm(str(tmp_path / "nope"))
    with pytest.raises(ResourceError, match="no config.json"):
        HFGenerator(str(tmp_path), device="cpu")


def test_uncached_hub_id_offline_fails_fast_with_a_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ResourceError, match="cannot load causal LM 'no-such-org/no-such-model-r2vc'") as info:
        load_causal_lm("no-such-org/no-such-model-r2vc")
    assert "offline mode is on" in str(info.value)
    with pytest.raises(ResourceError):
        load_causal_lm("no-such-org/no-such-model-r2vc", local_files_only=True)


def test_tokenizer_errors_name_the_tokenizer(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A server generator loads only the tokenizer: its failures must not blame a causal LM."""
    from averitec_tools.baselines.r2vc.stages.generation.lm_loading import load_tokenizer

    with pytest.raises(ResourceError, match=r"^cannot load tokenizer .*no config.json"):
        load_tokenizer(str(tmp_path / "nope"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ResourceError, match="^cannot load tokenizer 'no-such-org/no-such-model-r2vc'") as info:
        load_tokenizer("no-such-org/no-such-model-r2vc")
    assert "offline mode is on" in str(info.value) and "causal LM" not in str(info.value)


def test_device_and_dtype_selection() -> None:
    import torch

    assert select_device_dtype(device="cpu", dtype="auto") == ("cpu", torch.float32)
    assert select_device_dtype(device="cpu", dtype="bfloat16") == ("cpu", torch.bfloat16)
    expected = ("cuda", torch.bfloat16) if torch.cuda.is_available() else ("cpu", torch.float32)
    assert select_device_dtype() == expected
    with pytest.raises(UserError, match="unknown dtype 'fp8'"):
        select_device_dtype(device="cpu", dtype="fp8")
    if not torch.cuda.is_available():
        with pytest.raises(UserError, match="CUDA is not available"):
            select_device_dtype(device="cuda")


def test_a_reasoning_model_gets_its_switch_as_system_prompt_and_its_trace_is_skipped() -> None:
    from averitec_tools.baselines.r2vc.stages.generation.prompt import SYSTEM_PROMPT
    from averitec_tools.baselines.r2vc.stages.generation.reasoning import resolve_reasoning

    gen = ScriptedGenerator(["<think>\n</think>\nFalse. No [1].", "<think>the dates differ"])
    gen.reasoning = resolve_reasoning(model="nvidia/Llama-3.1-Nemotron-Nano-8B-v1")  # what HFGenerator resolves
    result = gen.generate("claim", _pool(3), k=2, seed=0)
    prompt = gen.calls[0][0][0]
    # the fallback template writes the roles literally: the switch is the system turn, the paper's sentence opens the user turn
    assert prompt.startswith(f"<|system|>\ndetailed thinking off\n<|user|>\n{SYSTEM_PROMPT}\nClaim: claim")
    # an empty trace is skipped; a trace cut off by max_new_tokens has no label: counted, Uncertain
    assert [c.label for c in result.candidates] == ["False", "Uncertain"] and result.n_malformed == 1
