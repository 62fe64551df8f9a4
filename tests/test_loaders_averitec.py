"""AVeriTeC loader: typed records, explicit nested Features, polars, stats, errors."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from averitec_tools import loaders
from averitec_tools.errors import UserError
from averitec_tools.records import Answer, AVeriTeCClaim, Question

CLAIMS: list[dict[str, Any]] = [
    {
        "claim": "The sky is green.",
        "required_reannotation": False,
        "label": "Refuted",
        "justification": "It is blue.",
        "claim_date": "31-10-2020",
        "speaker": "Someone",
        "original_claim_url": None,
        "fact_checking_article": "https://www.snopes.com/fact-check/sky/",
        "reporting_source": "Facebook",
        "location_ISO_code": "US",
        "claim_types": ["Event/Property Claim"],
        "fact_checking_strategies": ["Written Evidence", "Consultation"],
        "questions": [
            {
                "question": "What colour is the sky?",
                "answers": [
                    {"answer": "Blue", "answer_type": "Extractive", "source_url": "https://a.org/2020/10/01/x",
                     "source_medium": "Web text", "cached_source_url": "https://web.archive.org/web/20201105000000/https://a.org/2020/10/01/x"},
                    {"answer": "No", "answer_type": "Boolean", "boolean_explanation": "It is blue",
                     "source_url": "https://b.org/x", "source_medium": "Web text"},
                ],
            },
            {"question": "Is there a source?", "answers": [{"answer": "No answer could be found.", "answer_type": "Unanswerable"}]},
        ],
        "cached_original_claim_url": None,
    },
    {
        "claim": "Taxes doubled.",
        "required_reannotation": True,
        "label": "Supported",
        "justification": "They did.",
        "claim_date": "not a date",
        "speaker": None,
        "original_claim_url": None,
        "fact_checking_article": None,
        "reporting_source": None,
        "location_ISO_code": None,
        "claim_types": ["Numerical Claim", "Event/Property Claim"],
        "fact_checking_strategies": ["Numerical Comparison"],
        "questions": [{"question": "By how much?", "answers": [{"answer": "2x", "answer_type": "Abstractive", "source_url": "https://c.org/"}]}],
        "cached_original_claim_url": None,
    },
]


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    (tmp_path / "averitec").mkdir()
    (tmp_path / "averitec" / "dev.json").write_text(json.dumps(CLAIMS), encoding="utf-8")
    return tmp_path


def test_ids_are_hierarchical() -> None:
    for name in ("averitec/train", "averitec/dev", "averitec/test", "fever/paper_dev", "fever/train", "vitaminc/train", "fever/r2vc", "vitaminc/r2vc"):
        assert name in loaders.DATASETS
    assert loaders.resolve("averitec", "dev")[0].id == "averitec/dev"
    assert loaders.resolve("averitec/dev", None)[1] == "dev"


def test_records_are_the_shared_typed_records(data_dir: Path) -> None:
    recs = list(loaders.iter_dataset("averitec/dev", data_dir=data_dir))
    assert all(isinstance(r, AVeriTeCClaim) for r in recs)
    assert [r.claim_id for r in recs] == [0, 1]
    assert recs[0].questions[0].answers[1].boolean_explanation == "It is blue"
    # Built by hand from CLAIMS[0] with the record constructors (not from_dict, which the loader uses).
    archived = "https://web.archive.org/web/20201105000000/https://a.org/2020/10/01/x"
    assert recs[0] == AVeriTeCClaim(
        claim="The sky is green.", label="Refuted", justification="It is blue.", claim_date="31-10-2020",
        speaker="Someone", fact_checking_article="https://www.snopes.com/fact-check/sky/", reporting_source="Facebook",
        location_ISO_code="US", claim_types=("Event/Property Claim",),
        fact_checking_strategies=("Written Evidence", "Consultation"), required_reannotation=False,
        questions=(
            Question(question="What colour is the sky?", answers=(
                Answer(answer="Blue", answer_type="Extractive", source_url="https://a.org/2020/10/01/x",
                       cached_source_url=archived, source_medium="Web text"),
                Answer(answer="No", answer_type="Boolean", source_url="https://b.org/x", source_medium="Web text",
                       boolean_explanation="It is blue"),
            )),
            Question(question="Is there a source?",
                     answers=(Answer(answer="No answer could be found.", answer_type="Unanswerable"),)),
        ),
    )
    assert recs[0].date == dt.date(2020, 10, 31) and recs[1].date is None and recs[1].required_reannotation is True


def test_dataset_features_are_explicit_and_nested(data_dir: Path) -> None:
    ds = loaders.load("averitec", split="dev", data_dir=data_dir)
    f = ds.features
    assert f["claim_date_parsed"].dtype == "date32"
    answer = f["questions"].feature["answers"].feature
    assert set(answer) == {"answer", "answer_type", "source_url", "cached_source_url", "source_medium", "boolean_explanation"}
    assert f == loaders.features_for("averitec/dev")
    row = ds[0]
    assert row["claim_date"] == "31-10-2020" and row["claim_date_parsed"] == dt.date(2020, 10, 31)
    assert ds[1]["claim_date_parsed"] is None  # unparseable raw date kept, parsed is null
    assert row["questions"][0]["answers"][0]["cached_source_url"].startswith("https://web.archive.org")
    assert list(loaders.records_from_dataset(ds, name="averitec/dev")) == list(loaders.iter_dataset("averitec/dev", data_dir=data_dir))


def test_to_polars(data_dir: Path) -> None:
    frame = loaders.to_polars("averitec/dev", data_dir=data_dir)
    assert frame.shape[0] == 2
    assert frame["claim"].to_list() == ["The sky is green.", "Taxes doubled."]
    assert str(frame.schema["claim_date_parsed"]) == "Date"


def test_stats_hand_derived(data_dir: Path) -> None:
    s = loaders.dataset_stats("averitec", split="dev", data_dir=data_dir)
    assert s["n_claims"] == 2 and s["n_questions"] == 3 and s["n_answers"] == 4
    assert s["questions_per_claim"] == 1.5
    assert s["answers_per_question"] == pytest.approx(4 / 3)
    assert s["answer_types"] == {"Abstractive": 0.25, "Boolean": 0.25, "Extractive": 0.25, "Unanswerable": 0.25}
    assert s["unanswerable_questions"] == pytest.approx(1 / 3)
    assert s["labels"] == {"Refuted": 1, "Supported": 1}
    assert s["claim_types"] == {"Event/Property Claim": 1.0, "Numerical Claim": 0.5}
    assert s["claim_date_range"] == ["2020-10-31", "2020-10-31"]


def test_empty_file_gives_empty_dataset(tmp_path: Path) -> None:
    (tmp_path / "dev.json").write_text("[]", encoding="utf-8")
    with pytest.raises(UserError, match="file is empty|no claims"):
        (tmp_path / "dev2.json").write_text("", encoding="utf-8")
        loaders.load("averitec/dev", data_dir=tmp_path / "dev2.json")
    ds = loaders.load("averitec/dev", data_dir=tmp_path)
    assert len(ds) == 0 and ds.features == loaders.features_for("averitec/dev")


@pytest.mark.parametrize(
    ("name", "split", "match"),
    [
        ("averitek", "dev", r"unknown dataset 'averitek/dev' \(did you mean: averitec/dev"),
        ("averitec", "validation", "averitec has no split 'validation'"),
        ("averitec", None, "needs a split"),
        ("averitec/dev", "train", "is the 'dev' split"),
        ("fever/r2vc", None, "needs a split"),
        ("fever/r2vc", "nope", "fever has no split 'nope'"),
    ],
)
def test_bad_ids(name: str, split: str | None, match: str, data_dir: Path) -> None:
    with pytest.raises(UserError, match=match):
        loaders.load(name, split=split, data_dir=data_dir)


def test_missing_split_file_and_malformed_lines(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no train.json for averitec/train"):
        loaders.load("averitec/train", data_dir=data_dir)
    with pytest.raises(UserError, match="no such file or directory"):
        loaders.load("averitec/dev", data_dir=tmp_path / "nowhere")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"claim": "x", "label": "True"}]), encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.json\[0\]: unknown label 'True'"):
        loaders.load("averitec/dev", data_dir=bad)
    bad.write_text(json.dumps([{"claim": "x", "questions": [{"question": "q", "answers": [{"answer": 3}]}]}]), encoding="utf-8")
    with pytest.raises(UserError, match=r"questions\[0\].answers\[0\]: field 'answer' must be a string"):
        loaders.load("averitec/dev", data_dir=bad)
    bad.write_text('[{"claim": "x",', encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.json:1:\d+: truncated JSON"):
        loaders.load("averitec/dev", data_dir=bad)


def test_offline_without_local_files_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match="no local files found and the hub is disabled"):
        loaders.load("averitec/dev")


@pytest.mark.shared_data
def test_dev_records_give_back_the_raw_file(shared_data: Path) -> None:
    raw = json.loads((shared_data / "averitec" / "dev.json").read_text(encoding="utf-8"))
    recs = list(loaders.iter_dataset("averitec/dev", data_dir=shared_data))
    assert len(recs) == 500
    # Every field of every claim survives loading; 4 dev claims lack the optional
    # cached_original_claim_url key, which the records spell out as None.
    assert [r.to_dict() for r in recs] == [{"cached_original_claim_url": None, **o} for o in raw]
    s = loaders.dataset_stats("averitec/dev", data_dir=shared_data)
    # dev is close to, not equal to, the paper's whole-dataset figures
    assert abs(s["questions_per_claim"] - 2.60) < 0.1 and abs(s["answers_per_question"] - 1.07) < 0.05
    assert abs(s["answer_types"]["Extractive"] - 0.53) < 0.05
    assert abs(s["unanswerable_questions"] - 0.04) < 0.02
