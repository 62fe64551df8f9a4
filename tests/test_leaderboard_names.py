"""Team names that look alike (issue 30 item 16): Unicode TR39 confusable skeletons.

``blue``, ``BLUE`` and full-width ``ｂｌｕｅ`` were already one team (NFKC + case folding);
``bIue`` (a capital I for the l) and ``bluе`` (a Cyrillic е) were separate teams that
look the same on every page. They are refused now, naming the team they look like;
names that merely share letters are not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.leaderboard.names import confusable_with, skeleton
from tests._leaderboard_helpers import competition_yaml


@pytest.mark.parametrize(("a", "b"), [
    ("bIue", "blue"),  # LATIN CAPITAL I -> l
    ("blu\u0435", "blue"),  # CYRILLIC SMALL LETTER IE
    ("b\u217cue", "blue"),  # SMALL ROMAN NUMERAL FIFTY (NFKC: l)
    ("team1", "teaml"),  # digit one -> l
    ("rnoon", "moon"),  # r n -> m
    ("\u0391lpha", "Alpha"),  # GREEK CAPITAL ALPHA
])
def test_look_alikes_share_a_skeleton(a: str, b: str) -> None:
    assert skeleton(a) == skeleton(b)
    assert confusable_with(a, [b, "red"]) == b


@pytest.mark.parametrize(("a", "b"), [("blue", "blues"), ("red", "blue"), ("café", "cafe2"), ("東京", "京都")])
def test_different_names_do_not(a: str, b: str) -> None:
    assert confusable_with(a, [b]) is None


def test_store_refuses_a_look_alike_team(tmp_path: Path) -> None:
    from averitec_tools.leaderboard.store import Store

    store = Store(f"sqlite:///{tmp_path / 'lb.db'}")
    store.init(competition_yaml(), where="c.yaml")
    store.add_team("blue")
    for twin in ("bIue", "blu\u0435", "ｂIue", "BIUE"):
        with pytest.raises(UserError, match=r"team name .* looks like the existing team 'blue'"):
            store.add_team(twin)
    store.add_team("blues")
    store.add_team("Команда")  # Cyrillic names are welcome; only look-alikes are refused
    with pytest.raises(UserError, match="looks like the existing team 'Команда'"):
        store.add_team("Kоманда")  # a Latin K


def test_team_add_prints_the_stored_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--db", f"sqlite:///{tmp_path / 'lb.db'}"]
    (tmp_path / "c.yaml").write_text(competition_yaml())
    assert main(["leaderboard", "init", str(tmp_path / "c.yaml"), *db]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "team", "add", "  ｂｌｕｅ   team ", *db]) == 0
    assert capsys.readouterr().out.startswith("team 'blue team' added")
    assert main(["leaderboard", "team", "add", "ｒｅｄ", "--json", *db]) == 0
    assert json.loads(capsys.readouterr().out)["team"] == "red"
    assert main(["leaderboard", "team", "add", "bIue team", *db]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "looks like the existing team 'blue team'" in err
