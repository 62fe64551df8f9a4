"""Label maps between AVeriTeC, FEVER/VitaminC, the R2VC ternary space and R2VC verdicts."""

from __future__ import annotations

import pytest

from averitec_tools.errors import UserError
from averitec_tools.labels import (
    AMBIGUOUS,
    AVERITEC_LABELS,
    FEVER_LABELS,
    R2VC_LABELS,
    SPACES,
    TERNARY_LABELS,
    is_lossy,
    map_label,
    normalize_label,
)
from averitec_tools.records.averitec import AVERITEC_LABELS as RECORD_LABELS


def test_averitec_labels_are_the_records_labels() -> None:
    assert AVERITEC_LABELS == RECORD_LABELS


@pytest.mark.parametrize(
    ("label", "source", "target", "expected"),
    [
        ("Supported", "averitec", "fever", "SUPPORTS"),
        ("Refuted", "averitec", "r2vc", "False"),
        ("Not Enough Evidence", "averitec", "ternary", "NEI"),
        ("Conflicting Evidence/Cherrypicking", "averitec", "fever", "NOT ENOUGH INFO"),
        ("Conflicting Evidence/Cherrypicking", "averitec", "r2vc", "Uncertain"),
        ("SUPPORTS", "fever", "averitec", "Supported"),
        ("NOT ENOUGH INFO", "vitaminc", "averitec", "Not Enough Evidence"),
        ("REFUTES", "vitaminc", "ternary", "REFUTES"),
        ("True", "r2vc", "fever", "SUPPORTS"),
        ("False", "r2vc", "averitec", "Refuted"),
        ("Uncertain", "r2vc", "averitec", "Not Enough Evidence"),
        ("Uncertain", "r2vc", "ternary", "NEI"),
        ("NEI", "ternary", "r2vc", "Uncertain"),
        ("NEI", "ternary", "fever", "NOT ENOUGH INFO"),
    ],
)
def test_map_label(label: str, source: str, target: str, expected: str) -> None:
    assert map_label(label, source=source, target=target) == expected


def test_three_way_spaces_round_trip_exactly() -> None:
    for space, labels in (("fever", FEVER_LABELS), ("ternary", TERNARY_LABELS), ("r2vc", R2VC_LABELS)):
        for label in labels:
            for other in ("fever", "vitaminc", "ternary", "r2vc"):
                back = map_label(map_label(label, source=space, target=other), source=other, target=space)
                assert back == label


def test_averitec_round_trip_loses_only_conflicting() -> None:
    lost = [
        label
        for label in AVERITEC_LABELS
        if map_label(map_label(label, source="averitec", target="ternary"), source="ternary", target="averitec") != label
    ]
    assert lost == ["Conflicting Evidence/Cherrypicking"]
    assert is_lossy("Conflicting Evidence/Cherrypicking", source="averitec")
    assert not is_lossy("Supported", source="averitec")
    assert ("averitec", "Conflicting Evidence/Cherrypicking") in AMBIGUOUS


@pytest.mark.parametrize(
    ("raw", "space", "expected"),
    [
        ("supports", "fever", "SUPPORTS"),
        ("Not_Enough_Info", "fever", "NOT ENOUGH INFO"),
        ("NEI", "fever", "NOT ENOUGH INFO"),
        ("SUPPORTED", "ternary", "SUPPORTS"),
        ("not enough info", "ternary", "NEI"),
        ("true", "r2vc", "True"),
        ("  refuted ", "averitec", "Refuted"),
    ],
)
def test_normalize_variants(raw: str, space: str, expected: str) -> None:
    assert normalize_label(raw, space=space) == expected


def test_unknown_label_and_space() -> None:
    with pytest.raises(UserError, match=r"dev.jsonl:3: unknown fever label 'MAYBE'.*valid labels: SUPPORTS"):
        normalize_label("MAYBE", space="fever", where="dev.jsonl:3")
    with pytest.raises(UserError, match="did you mean: fever"):
        map_label("SUPPORTS", source="feverr", target="averitec")
    with pytest.raises(UserError, match="must be a string"):
        normalize_label(3, space="fever")  # type: ignore[arg-type]


def test_every_space_maps_every_label_to_ternary() -> None:
    for name in SPACES:
        space = SPACES.get(name)
        assert set(space.to_ternary) == set(space.labels)
        assert set(space.to_ternary.values()) <= set(TERNARY_LABELS)
        assert set(space.from_ternary) == set(TERNARY_LABELS)
