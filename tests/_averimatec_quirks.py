"""A small AVerImaTeC case in the exact layouts, with recorded judge replies covering every
quirk of the organisers' evaluator, and stand-in "official" prompt files.

The stand-in files have the organisers' file names and code structure but text written for
these tests (the real templates have no licence and never enter the repository); tests
point the SHA-256 table at them. Claims, by the quirk they exercise:

0. two image ratings ("9" passes, "8/10" is skipped) and a free pass (one side without images);
1. tuple edge cases: a gold index listed twice (first counts), unparseable and one-element
   tuples skipped, an out-of-range index passing unrated, ``REF_0`` as Python's ``[-1]``
   (rated " 9\\n", which ``int`` accepts); predicted questions starting with a digit (not
   numbered); a question count above the gold count (clipped); a justification reply
   without ``[PRED in REF Exp]: `` (theirs raises; 0 here);
2. replies without markers (counts 0, no tuples); a justification explanation without enumerations;
3. no predicted evidence (theirs: None, then the notebook crashes; 0 here, never passes) and
   no predicted questions (theirs raises; 0 here);
4. ratings "10" and "9.5" (skipped);
5. evidence 2/5 = 0.4: fails ``> 0.4``, passes ``> 0.3``; the reply's own count ignored;
6. evidence 3/10 = 0.3: passes only ``>= 0.3``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from _averimatec_fixtures import b64, image_bytes

TEMPLATES = {
    "templates/evid_evaluation_text_seperate.txt": "STAND-IN evidence template.\r\nMatch the items.\n",
    "templates/ques_evaluation_text.txt": "STAND-IN question template.\nCount the questions.\n",
    "templates/justi_evaluation_text.txt": "STAND-IN justification template.\n",
    "templates/qa_to_evid_demos.txt": "STAND-IN demos, line one\nline two\n[QUES]: Demo?\n[ANS]: Demo.\n[STAT]: A demo.",
}
REF_EVAL = '''"""Stand-in for the organisers' ref_eval.py (test fixture; same structure, our own text)."""


def compute_image_scores(model, model_name, pred_evid, ref_evid, score):
    prompt = "STAND-IN: rate how alike two image sets are, 0-10.\\n"
    prompt += '[IMG_SET_1]:'
    messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    messages[0]["content"].append({'type': 'text', "text": '\\n[IMG_SET_2]:'})
    messages[0]["content"].append({'type': 'text', "text": '\\nSTAND-IN: one integer:'})
    return messages
'''
INTRO, BETWEEN, INSTRUCTION = "STAND-IN: rate how alike two image sets are, 0-10.\n[IMG_SET_1]:", "\n[IMG_SET_2]:", \
    "\nSTAND-IN: one integer:"
J_OK = "[PRED in REF]: 1\n[PRED in REF Exp]: 1. a fact. \n[REF in PRED]: 2\n[REF in PRED Exp]: 1. x. 2. y. 3. z."


def write_clone(root: Path) -> dict[str, str]:
    """The stand-in files under ``root`` (a clone's layout); their SHA-256 by path."""
    files = {**{k: v.encode() for k, v in TEMPLATES.items()}, "prepare_submission/ref_eval.py": REF_EVAL.encode()}
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}


def _qa(i: int, k: int, *, inp: list[str] | None = None, kind: str = "Extractive", img: list[str] | None = None,
        ) -> dict[str, Any]:
    answer: dict[str, Any] = {"answer_type": kind, "source_url": "https://example.org", "source_medium": "Web text"}
    if kind == "Image":
        answer["image_answers"] = img or []
    else:
        answer["answer_text"] = f"A-c{i}-q{k} first\nsecond" if kind == "Extractive" else "No"
    if kind == "Boolean":
        answer["boolean_explanation"] = f"Because c{i}q{k}."
    return {"input_images": inp or [], "answers": [answer], "question": f"Q-c{i}-q{k} what\nhappened?",
            "answer_method": "Text-search", "question_type": ["Text-related"]}


def _claim(i: int, label: str, questions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"article": f"https://factcheck.example/{i}", "date": "2024-02-03", "label": label, "location": "GB",
            "questions": questions, "justification": f"Gold justification {i}.", "claim_text": f"Claim {i}.",
            "claim_images": [f"c{i}.jpg"], "metadata": {"speaker": "x", "modality": "Image-text"}}


def _img(seed: int) -> str:
    return b64(image_bytes(seed, fmt="PNG" if seed % 2 else "JPEG"))


GOLD_IMAGES = {"g0a.png": 501, "g0b.png": 502, "g1c.png": 503, "g4a.png": 504, "g4b.png": 505}


def gold() -> list[dict[str, Any]]:
    return [
        _claim(0, "Supported", [_qa(0, 0, inp=["g0a.png"]), _qa(0, 1, kind="Image", img=["g0b.png"]),
                                _qa(0, 2, kind="Boolean")]),
        _claim(1, "Refuted", [_qa(1, 0), _qa(1, 1), _qa(1, 2, inp=["g1c.png"])]),
        _claim(2, "Not Enough Evidence", [_qa(2, 0), _qa(2, 1, kind="Boolean")]),
        _claim(3, "Refuted", [_qa(3, 0)]),
        _claim(4, "Supported", [_qa(4, 0, inp=["g4a.png"]), _qa(4, 1, kind="Image", img=["g4b.png"])]),
        _claim(5, "Refuted", [_qa(5, k) for k in range(5)]),
        _claim(6, "Conflicting Evidence/Cherrypicking", [_qa(6, k) for k in range(10)]),
    ]


PRED_IMAGES = {name: _img(seed) for name, seed in
               {"P0a": 601, "P0b": 602, "P0c": 603, "P1a": 604, "P4a": 605, "P4b": 606}.items()}


def _ev(i: int, k: int, images: list[str]) -> dict[str, Any]:
    refs = " ".join(f"[IMG_{n}]" for n in range(1, len(images) + 1))
    return {"text": f"EVI-c{i}-e{k} says {refs}".strip(), "images": [PRED_IMAGES[n] for n in images]}


def predictions() -> list[dict[str, Any]]:
    def item(i: int, verdict: str, evidence: list[dict[str, Any]], questions: list[str] | None = None) -> dict[str, Any]:
        qs = questions if questions is not None else [f"QUE-c{i}-q0 who?", f"QUE-c{i}-q1 when?"]
        return {"id": i, "questions": qs, "justification": f"JUS-c{i} predicted.", "verdict": verdict,
                "evidence": evidence}

    return [
        item(0, " supported ", [_ev(0, 0, ["P0a"]), _ev(0, 1, []), _ev(0, 2, ["P0b", "P0c"])]),
        item(1, "Supported", [_ev(1, 0, ["P1a"]), _ev(1, 1, [])], ["1) QUE-c1-q0 first", "QUE-c1-q1 second"]),
        item(2, "Not Enough Evidence", [_ev(2, 0, [])]),
        item(3, "Refuted", [], []),
        item(4, "SUPPORTED", [_ev(4, 0, ["P4a"]), _ev(4, 1, ["P4b"])]),
        item(5, "Refuted", [_ev(5, 0, []), _ev(5, 1, [])]),
        item(6, "Conflicting Evidence/Cherrypicking", [_ev(6, k, []) for k in range(3)]),
    ]


def digest(data: bytes) -> str:
    return f"<image:{hashlib.sha256(data).hexdigest()[:12]}>"


def gold_digest(name: str) -> str:
    return digest(image_bytes(GOLD_IMAGES[name], fmt="PNG"))


def pred_digest(name: str) -> str:
    import base64

    return digest(base64.b64decode(PRED_IMAGES[name]))


def _rating(pred: list[str], gold_names: list[str], reply: str) -> dict[str, Any]:
    match = [INTRO + "".join(pred_digest(p) for p in pred) + BETWEEN + "".join(gold_digest(g) for g in gold_names)]
    return {"match": match, "responses": [{"content": reply}]}


def rules() -> list[dict[str, Any]]:
    """The recorded replies, as rules of tests/_judge_server.py (first match wins)."""
    out = [{"match": [f"[QUES]: Q-c{i}-q{k} "], "responses": [{"content": f"[STAT]: S-c{i}-q{k} holds."}]}
           for i, c in enumerate(gold()) for k in range(len(c["questions"]))]
    evidence = {
        0: "[PRED in REF]: 2; (PRED_1, REF_1), (PRED_3, REF_2)\n[REF in PRED]: 3; (REF_1, PRED_1), (REF_2, PRED_3), (REF_3, PRED_2)",
        1: "[PRED in REF]: 0\n[REF in PRED]: 9; (REF_1, PRED_2), (REF_1, PRED_1), (REF_x, PRED_1), (REF_2), "
           "(REF_9, PRED_1), (REF_0, PRED_1)",
        2: "The evidence looks fine.",
        4: "[PRED in REF]: 2; (PRED_1, REF_1), (PRED_2, REF_2)\n[REF in PRED]: 2; (REF_1, PRED_1), (REF_2, PRED_2)",
        5: "[PRED in REF]: 2\n[REF in PRED]: 4; (REF_1, PRED_1), (REF_2, PRED_2)",
        6: "[PRED in REF]: 3\n[REF in PRED]: 3; (REF_1, PRED_1), (REF_5, PRED_2), (REF_9, PRED_3)",
    }
    out += [{"match": [f"EVI-c{i}-e0"], "responses": [{"content": r}]} for i, r in evidence.items()]
    questions = {1: "[PRED in REF]: 2\n[REF in PRED]: 5", 2: "No markers here."}
    out += [{"match": [f"QUE-c{i}-q0"], "responses": [{"content": questions.get(i, "[PRED in REF]: 1\n[REF in PRED]: 2")}]}
            for i in range(7)]
    justifications = {1: "[PRED in REF]: 2\n[REF in PRED]: 1",
                      2: "[PRED in REF]: 1\n[PRED in REF Exp]: none\n[REF in PRED]: 1\n[REF in PRED Exp]: 1. x."}
    out += [{"match": [f"JUS-c{i}"], "responses": [{"content": justifications.get(i, J_OK)}]} for i in range(7)]
    out += [_rating(["P0a"], ["g0a.png"], "9"), _rating(["P0b", "P0c"], ["g0b.png"], "8/10"),
            _rating(["P1a"], ["g1c.png"], " 9\n"), _rating(["P4a"], ["g4a.png"], "10"), _rating(["P4b"], ["g4b.png"], "9.5")]
    return out


def write_case(root: Path) -> tuple[Path, Path]:
    """``root/val.json``, ``root/images/*`` and ``root/sub.json``."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    for name, seed in GOLD_IMAGES.items():
        (root / "images" / name).write_bytes(image_bytes(seed, fmt="PNG"))
    (root / "val.json").write_text(json.dumps(gold()), encoding="utf-8")
    (root / "sub.json").write_text(json.dumps(predictions()), encoding="utf-8")
    return root / "sub.json", root / "val.json"


#: Hand-derived per-claim values (question, evidence, verdict score, justification) under the
#: departures; the reference gives ``None`` where the organisers' code would raise.
BY_HAND = [
    (2 / 3, 2 / 3, 1.0, 2 / 3),    # q: 2 of 3 gold; e: REF_1 (rated 9) + REF_3 (free) of 3; j: 2 of 3 enumerated
    (1.0, 1.0, 0.0, 0.0),          # q: 5 of 3, clipped; e: REF_1 free, REF_9 free, REF_0 rated " 9\n"; j: no marker
    (0.0, 0.0, 1.0, 0.0),          # no markers; j: no enumerations on the predicted side
    (0.0, None, 1.0, 2 / 3),       # nothing predicted
    (1.0, 0.5, 1.0, 2 / 3),        # "10" passes, "9.5" does not
    (2 / 5, 2 / 5, 1.0, 2 / 3),    # q: 2 of 5; e: 2 of 5 (the reply says 4)
    (2 / 10, 3 / 10, 1.0, 2 / 3),  # q: 2 of 10; e: 3 of 10, all without images: free passes
]


def _flat(content: Any, images: Path) -> str:
    """A reference message flattened as tests/_judge_server.py flattens the package's requests."""
    if isinstance(content, str):
        return content
    out = []
    for kind, value in content:
        if kind == "text":
            out.append(value)
        else:
            import base64

            data = (images / value).read_bytes() if (images / value).is_file() else base64.b64decode(value)
            out.append(digest(data))
    return "".join(out)


def reference_rows(clone: Path, images: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The organisers' loop restated (tests/_averimatec_reference.py) on the recorded replies of
    :func:`rules`, with the stand-in templates of ``clone``; also every prompt it built."""
    import _averimatec_reference as ref

    templates = ref.read_templates(clone)
    prompts: list[str] = []
    table = rules()

    def ask(content: Any) -> str:
        flat = _flat(content, images)
        prompts.append(flat)
        return next((r["responses"][0]["content"] for r in table if all(m in flat for m in r["match"])), "UNEXPECTED")

    rows = [ref.evaluate_claim(g, p, templates, ask, (INTRO, BETWEEN, INSTRUCTION))
            for g, p in zip(gold(), predictions(), strict=True)]
    return rows, prompts
