"""The organisers' AVerImaTeC judge prompts, obtained on the user's machine and verified by SHA-256.

The official evaluator (``abril4416/AVerImaTec_Shared_Task``, ``prepare_submission/``) reads
four templates from ``templates/`` and builds the image-rating call from string constants
in ``prepare_submission/ref_eval.py``. The repository has no licence, so this package ships
none of that text: ``--judge-prompt official`` downloads the five files at the pinned
commit (``official:PATH`` reads them from the user's clone, ``PATH/templates/...``), checks
each file's SHA-256 against :data:`AVERIMATEC_SOURCES`, caches them, and reads
``ref_eval.py``'s constants with :mod:`ast` (never executing it). Any other bytes are
refused with one line naming the file.
"""

from __future__ import annotations

import ast
import hashlib
import os
from dataclasses import dataclass

from averitec_tools.errors import UserError
from averitec_tools.metrics.averimatec_prompts import AVerImaTeCPrompts, readlines
from averitec_tools.metrics.ev2r_official import (
    OFFICIAL,
    OfficialPromptSource,
    is_official,
    official_bytes,
)

REPO = "abril4416/AVerImaTec_Shared_Task"
COMMIT = "f6f361d2fc5a0ab7d3ea282e2beced56b928e1bd"
NAME = "averimatec-official"


def _source(role: str, path: str, sha256: str) -> tuple[str, OfficialPromptSource]:
    return role, OfficialPromptSource(
        name=NAME, repo=REPO, commit=COMMIT, paths=(path,), sha256=sha256, variables=(),
        url=f"https://raw.githubusercontent.com/{REPO}/{COMMIT}/{path}", what="AVerImaTeC",
    )


#: Each file the official prompts come from, by role, with the SHA-256 of its bytes at ``f6f361d``.
AVERIMATEC_SOURCES: dict[str, OfficialPromptSource] = dict([
    _source("evidence", "templates/evid_evaluation_text_seperate.txt",
            "57f9e910f9801d67658b67df7722112d8b5b7cc4b27a96c96d538a467ad810d9"),
    _source("questions", "templates/ques_evaluation_text.txt",
            "b5f72fe9f876c74e54cbad76b8d972801deb2f83978936128cabc2bb81f19228"),
    _source("justification", "templates/justi_evaluation_text.txt",
            "43a30277a87004b33c7218035d0af429154f5284e514dc2b277fb0f70be93af6"),
    _source("qa_to_evidence", "templates/qa_to_evid_demos.txt",
            "3915206b77be85e81cacd203058b070be9257f3538065f8c187b9642ab9a9be5"),
    _source("image", "prepare_submission/ref_eval.py",
            "4d05128a735c6b2dce41c85c0821bca3b14fe019e3e573b220e3a6b2ee471e64"),
])


@dataclass(frozen=True)
class ImageStrings:
    """The image-rating call's three text parts, read from ``ref_eval.py``."""

    intro: str
    between: str
    instruction: str


def _constant(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def image_strings(source: bytes, *, where: str) -> ImageStrings:
    """The texts of ``compute_image_scores``: ``prompt = ...`` plus its ``+=``, then the two
    ``{"type": "text", "text": ...}`` parts of the message it sends (first occurrences).

    Example:
        >>> code = (b"def compute_image_scores(m):\\n    prompt='Rate.\\\\n'\\n    prompt+='[IMG_SET_1]:'\\n"
        ...         b"    c=[{'type':'text','text':'\\\\n[IMG_SET_2]:'}, {'type':'text','text':'\\\\nOne integer:'}]\\n")
        >>> image_strings(code, where="ref_eval.py")
        ImageStrings(intro='Rate.\\n[IMG_SET_1]:', between='\\n[IMG_SET_2]:', instruction='\\nOne integer:')
    """
    try:
        tree = ast.parse(source.decode("utf-8"))
    except (UnicodeDecodeError, SyntaxError, ValueError) as exc:
        raise UserError(f"{where}: not a Python file ({exc})") from None
    func = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "compute_image_scores"), None)
    if func is None:
        raise UserError(f"{where}: no function compute_image_scores")
    intro, texts = _scan(func)
    if not intro or len(texts) < 2:
        raise UserError(f"{where}: compute_image_scores does not build the image-rating message as expected")
    return ImageStrings(intro, texts[0], texts[1])


def _scan(func: ast.FunctionDef) -> tuple[str, list[str]]:
    """``prompt`` (its assignment plus ``+=``) and the text parts' constants, in source order."""
    intro, texts = "", []
    for node in sorted(ast.walk(func), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "prompt" for t in node.targets):
            intro = _constant(node.value) or intro
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == "prompt":
            intro += _constant(node.value) or ""
        elif isinstance(node, ast.Dict):
            fields = {_constant(k): v for k, v in zip(node.keys, node.values, strict=True)}
            text = _constant(fields.get("text"))
            if _constant(fields.get("type")) == "text" and text is not None and text not in texts:
                texts.append(text)
    return intro, texts


def load_official_prompts(
    spec: str = OFFICIAL,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    allow_download: bool = True,
    sources: dict[str, OfficialPromptSource] | None = None,
) -> AVerImaTeCPrompts:
    """The organisers' prompts from the cache, a clone (``official:PATH``) or downloads, verified.

    ``sources`` defaults to :data:`AVERIMATEC_SOURCES` (looked up at call time, so tests can
    point it at a local server and files written for the tests).

    Example:
        >>> import tempfile
        >>> load_official_prompts(f"official:{tempfile.mkdtemp()}", cache_dir=tempfile.mkdtemp())
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: ...: no templates/evid_evaluation_text_seperate.txt here (...)
    """
    if not is_official(spec):
        raise ValueError(f"not an official prompt spec: {spec!r}")
    table = AVERIMATEC_SOURCES if sources is None else sources
    files: dict[str, str] = {}
    raw: dict[str, tuple[bytes, str]] = {}
    for role, source in table.items():
        data, where, _ = official_bytes(spec, source=source, cache_dir=cache_dir, allow_download=allow_download)
        raw[role] = (data, where)
        if role != "image":
            try:
                files[role] = data.decode("utf-8")
            except UnicodeDecodeError:
                raise UserError(f"{where}: not UTF-8 text") from None
    image = image_strings(raw["image"][0], where=raw["image"][1]) if "image" in raw else None
    if image is None or set(files) != {"evidence", "questions", "justification", "qa_to_evidence"}:
        raise UserError("the official AVerImaTeC prompt table must name the four templates and ref_eval.py")
    combined = hashlib.sha256("\n".join(f"{s.paths[0]}:{s.sha256}" for s in table.values()).encode()).hexdigest()
    return AVerImaTeCPrompts(
        name=f"{NAME}@{COMMIT[:7]}",
        sha256=combined,
        # eval_offline -> qa_to_evidence.py:17-18: "\n".join(readlines()) (each line keeps its newline)
        qa_demos="\n".join(readlines(files["qa_to_evidence"])),
        # ref_eval.py:18-28: "".join(readlines()), the text with universal newlines
        evidence="".join(readlines(files["evidence"])),
        questions="".join(readlines(files["questions"])),
        justification="".join(readlines(files["justification"])),
        image_intro=image.intro, image_between=image.between, image_instruction=image.instruction,
    )


def load_prompts(spec: str | None, *, cache_dir: str | os.PathLike[str] | None = None,
                 allow_download: bool = True) -> AVerImaTeCPrompts:
    """``--judge-prompt``: the packaged prompts (``None``), a prompt file, or ``official[:PATH]``."""
    if is_official(spec):
        return load_official_prompts(str(spec), cache_dir=cache_dir, allow_download=allow_download)
    return AVerImaTeCPrompts.load(spec)


__all__ = ["AVERIMATEC_SOURCES", "COMMIT", "REPO", "ImageStrings", "image_strings", "load_official_prompts",
           "load_prompts"]
