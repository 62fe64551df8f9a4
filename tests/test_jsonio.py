"""JSON/JSONL reading errors name file, line and column; writes are atomic."""

from __future__ import annotations

from pathlib import Path

import pytest

from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_writer, iter_records, load_json, sniff_format


def test_truncated_array_is_reported_as_truncated(tmp_path: Path) -> None:
    p = tmp_path / "preds.json"
    p.write_text('[\n {"claim_id": 0, "claim": "an unfinished str')
    with pytest.raises(UserError, match=r"preds.json:2:\d+: truncated JSON: Unterminated string"):
        load_json(p)
    p.write_text('[\n {"claim_id": 0},\n')
    with pytest.raises(UserError, match=r"preds.json:3:1: truncated JSON"):
        load_json(p)


def test_invalid_json_in_the_middle_names_line_and_column(tmp_path: Path) -> None:
    p = tmp_path / "preds.json"
    p.write_text('[\n {"claim_id": 0,, "x": 1}\n]')
    with pytest.raises(UserError, match=r"preds.json:2:17: invalid JSON"):
        load_json(p)


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    p = tmp_path / "sub.jsonl"
    p.write_bytes(b'{"id": 0}\n{"id": 1, "label": "caf\xe9"}\n')
    with pytest.raises(UserError, match=r"sub.jsonl:2:\d+: file is not valid UTF-8 \(byte 0xe9\)"):
        list(iter_records(p))
    p.write_text('{"id": 0}\n{"id": 1, "evidence": ["a"\n')
    with pytest.raises(UserError, match=r"sub.jsonl:2:\d+: truncated JSON"):
        list(iter_records(p))


def test_sniff_and_iterate_both_formats(tmp_path: Path) -> None:
    arr, lines = tmp_path / "a.json", tmp_path / "b.jsonl"
    arr.write_text('[{"id": 0}, {"id": 1}]')
    lines.write_text('{"id": 0}\n\n{"id": 1}\n')
    assert sniff_format(arr) == "json" and sniff_format(lines) == "jsonl"
    assert [r.where for r in iter_records(arr)] == [f"{arr}[0]", f"{arr}[1]"]
    assert [r.where for r in iter_records(lines)] == [f"{lines}:1", f"{lines}:3"]


@pytest.mark.parametrize("content", ["", "  \n", "hello"])
def test_empty_or_non_json_files(tmp_path: Path, content: str) -> None:
    p = tmp_path / "x.json"
    p.write_text(content)
    with pytest.raises(UserError, match="x.json"):
        sniff_format(p)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        load_json(tmp_path / "nope.json")
    with pytest.raises(UserError, match="is a directory"):
        load_json(tmp_path)


def test_atomic_writer_leaves_nothing_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out" / "result.json"
    with pytest.raises(RuntimeError), atomic_writer(target) as fh:
        fh.write('{"partial": ')
        raise RuntimeError("interrupted")
    assert not target.exists() and list(target.parent.iterdir()) == []
    with atomic_writer(target) as fh:
        fh.write("{}")
    assert target.read_text() == "{}"


@pytest.mark.parametrize(("text", "where"), [
    ('[{"claim_id": 0, "claim": "a"}, {"claim_id": 7, "evidence": [{"answer": "x\\ud800y"}]}]',
     r"f\.json\[1\] \(claim_id 7\): evidence\[0\]\.answer"),
    ('[{"id": "k", "text": "\\udfff"}]', r"f\.json\[0\] \(id 'k'\): text"),
    ('{"a": {"\\ud800": 1}}', r"f\.json: a\.<key>"),
    ('["\\uDBFF\\u0041"]', r"f\.json\[0\]"),  # a high surrogate followed by an ordinary escape
])
def test_lone_surrogate_is_refused_naming_file_item_and_field(tmp_path: Path, text: str, where: str) -> None:
    """Issue 30 item 10: a lone surrogate escape decodes to a string no UTF-8 writer can
    write; it is refused where it is read, one line naming the file, the item and the field."""
    p = tmp_path / "f.json"
    p.write_text(text)
    with pytest.raises(UserError, match=where + r".*lone surrogate"):
        list(iter_records(p)) if text.startswith("[") else load_json(p)


def test_lone_surrogate_in_jsonl_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "f.jsonl"
    p.write_text('{"id": 1, "claim": "ok"}\n{"id": 2, "claim": "bad \\ud800"}\n')
    with pytest.raises(UserError, match=r"f\.jsonl:2 \(id 2\): claim: .*lone surrogate U\+D800"):
        list(iter_records(p))


def test_surrogate_pairs_and_escaped_backslashes_are_accepted(tmp_path: Path) -> None:
    p = tmp_path / "f.json"
    p.write_text('[{"emoji": "\\ud83d\\ude00", "literal": "\\\\ud800", "plain": "\U0001f600"}]')
    assert [loc.value for loc in iter_records(p)] == [{"emoji": "\U0001f600", "literal": "\\ud800", "plain": "\U0001f600"}]
