"""What the AVerImaTeC judge is shown, built exactly as the organisers' code builds it.

Five kinds of call (``abril4416/AVerImaTec_Shared_Task`` at ``f6f361d``; lines in
``docs/averimatec.md``), all one user message:

* ``qa`` -- a gold question-answer pair turned into one statement: the demonstrations,
  then ``[QUES]: `` question (newlines as ``"; "``, its image tokens appended with no
  separator, joined by ``", "``), ``[ANS]: `` the answers joined by a space (an image answer
  as its ``[IMG_k]`` tokens, a Boolean answer followed by its explanation, newlines as
  ``"; "``) and ``[STAT]:``, joined by newlines; at most 256 new tokens. The reply, with
  ``[STAT]:`` removed and stripped, is the gold evidence item's text. The organisers join
  the demonstration file's lines (which keep their newlines) with ``"\\n"`` here, so its
  lines come out double-spaced; the other templates are read as they are.
* ``evidence`` / ``questions`` / ``justification`` -- template, ``"\\n\\n[PRED]: "``
  prediction, ``"\\n[REF]: "`` reference. Evidence items are ``"k. text"`` joined by
  ``". "``; questions ``"k. question"`` joined by a space (the predicted ones unnumbered when
  the first starts with a digit); justifications as they are. At most 1024 new tokens.
* ``image`` -- the rating instruction, the predicted item's images, ``[IMG_SET_2]:``, the
  gold item's images, the request for one integer (text and image parts in that order).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files

from averitec_tools.errors import UserError
from averitec_tools.jsonio import read_text
from averitec_tools.records.averimatec import AVerImaTeCQuestion

DEFAULT_PROMPT = "averimatec_prompt_v1.txt"
#: Sections of a prompt file, in file order.
SECTIONS = ("qa_to_evidence", "evidence", "questions", "justification", "image_intro", "image_between",
            "image_instruction")
#: ``max_new_tokens`` of each call kind (``qa_to_evidence.py:36``; ``ref_eval.py``: 1024).
MAX_NEW_TOKENS = {"qa": 256, "evidence": 1024, "questions": 1024, "justification": 1024, "image": 1024}
_SECTION = re.compile(r"^\[(" + "|".join(SECTIONS) + r")\]\s*$", re.MULTILINE)


def readlines(text: str) -> list[str]:
    """``open(path).readlines()`` of a file holding ``text`` (universal newlines, kept).

    Example:
        >>> readlines("a\\r\\nb\\n\\nc")
        ['a\\n', 'b\\n', '\\n', 'c']
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return [line for line in lines if line]


@dataclass(frozen=True)
class AVerImaTeCPrompts:
    """The texts of every judge call; ``qa_demos`` as the ``qa`` prompt embeds it.

    Example:
        >>> p = AVerImaTeCPrompts.load()
        >>> p.name, len(p.sha256), p.image_between
        ('averimatec_prompt_v1.txt', 64, '[IMG_SET_2]:')
    """

    name: str
    sha256: str
    qa_demos: str
    evidence: str
    questions: str
    justification: str
    image_intro: str
    image_between: str
    image_instruction: str

    @property
    def is_official(self) -> bool:
        return self.name.startswith("averimatec-official")

    @classmethod
    def from_text(cls, text: str, *, name: str) -> AVerImaTeCPrompts:
        """Read a prompt file: ``[section]`` lines, ``#`` comment lines (see the packaged file)."""
        body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
        parts = _SECTION.split(body)
        sections = {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}
        missing = [s for s in SECTIONS if not sections.get(s)]
        if missing:
            raise UserError(f"{name}: an AVerImaTeC prompt file needs the sections "
                            f"{', '.join(f'[{s}]' for s in SECTIONS)}; missing or empty: {', '.join(missing)}")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return cls(name, digest, sections["qa_to_evidence"], sections["evidence"], sections["questions"],
                   sections["justification"], sections["image_intro"], sections["image_between"],
                   sections["image_instruction"])

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> AVerImaTeCPrompts:
        """The packaged prompts, or the prompt file at ``path``."""
        if path is None:
            text = (files("averitec_tools") / "data" / DEFAULT_PROMPT).read_text(encoding="utf-8")
            return cls.from_text(text, name=DEFAULT_PROMPT)
        p = os.fspath(path)
        text = read_text(p, what="judge prompt", undecodable="judge prompt")
        return cls.from_text(text, name=os.path.basename(p))

    def text_call(self, kind: str, *, prediction: str, reference: str) -> str:
        """The ``evidence``/``questions``/``justification`` prompt (``gen_incontext_input_textonly``).

        Example:
            >>> AVerImaTeCPrompts("p", "0", "", "T", "", "", "", "", "").text_call("evidence", prediction="1. a", reference="1. b")
            'T\\n\\n[PRED]: 1. a\\n[REF]: 1. b'
        """
        template = {"evidence": self.evidence, "questions": self.questions, "justification": self.justification}[kind]
        return "\n".join([template, "\n[PRED]: " + prediction, "[REF]: " + reference])

    def qa_call(self, question: str, answer: str) -> str:
        """The gold QA pair's conversion prompt (``qa_to_evidence.py`` ``gen_incontext_input``)."""
        return "\n".join([self.qa_demos, "[QUES]: " + question, "[ANS]: " + answer, "[STAT]:"])


def gold_pair(question: AVerImaTeCQuestion) -> tuple[str, str, tuple[str, ...]]:
    """``(question text, answer text, image names)`` of a gold pair (``utils.py`` ``convert_qa_format``).

    Example:
        >>> from averitec_tools.records.averimatec import AVerImaTeCQuestion
        >>> q = AVerImaTeCQuestion.from_dict({"question": "Is it\\nold?", "input_images": ["q.jpg"], "answers": [
        ...     {"answer_type": "Boolean", "answer_text": "Yes", "boolean_explanation": "Since\\n1990."},
        ...     {"answer_type": "Image", "image_answers": ["a.jpg"]}]}, where="w")
        >>> gold_pair(q)
        ('Is it; old?[IMG_1]', 'Yes Since; 1990. [IMG_2]', ('q.jpg', 'a.jpg'))
    """
    images = list(question.input_images)
    ques_tokens = [f"[IMG_{k}]" for k in range(1, len(images) + 1)]
    answers: list[str] = []
    for answer in question.answers:
        if answer.is_image:
            for name in answer.image_answers:
                images.append(name)
                answers.append(f"[IMG_{len(images)}]")
        else:
            answers.append(answer.answer_text or "")
        if answer.answer_type == "Boolean":
            answers.append(answer.boolean_explanation or "")
    text = question.question.replace("\n", "; ")
    return text + ", ".join(ques_tokens), " ".join(answers).replace("\n", "; "), tuple(images)


def statement(reply: str) -> str:
    """The gold evidence text from a ``qa`` reply: ``[STAT]:`` removed, stripped."""
    return reply.replace("[STAT]:", "").strip()


def numbered(items: Sequence[str], sep: str) -> str:
    """``"1. a" + sep + "2. b"``.

    Example:
        >>> numbered(["a", "b"], ". ")
        '1. a. 2. b'
    """
    return sep.join(f"{k}. {item}" for k, item in enumerate(items, start=1))


def predicted_questions(questions: Sequence[str]) -> str:
    """The predicted questions as sent: numbered unless the first starts with a digit.

    The organisers test ``pred[0][0].isdigit()``, which raises on an empty first question;
    here an empty first question counts as not starting with a digit.

    Example:
        >>> predicted_questions(["Who?", "When?"]), predicted_questions(["1) Who?", "When?"])
        ('1. Who? 2. When?', '1) Who? When?')
    """
    if questions and questions[0][:1].isdigit():
        return " ".join(questions)
    return numbered(questions, " ")


__all__ = [
    "DEFAULT_PROMPT",
    "MAX_NEW_TOKENS",
    "SECTIONS",
    "AVerImaTeCPrompts",
    "gold_pair",
    "numbered",
    "predicted_questions",
    "readlines",
    "statement",
]
