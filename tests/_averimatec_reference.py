"""An independent restatement of the organisers' AVerImaTeC evaluator, for the tests.

Written from ``prepare_submission/{eval_offline,ref_eval,utils,qa_to_evidence}.py`` and
``ipython/Eval_Score_Compute.ipynb`` of ``abril4416/AVerImaTec_Shared_Task`` at ``f6f361d``,
step by step as that code runs (their control flow, their string operations, their bare
``except``), with the model call replaced by ``ask``: a function from the message
content (a string, or a list of ``("text", str)`` / ``("image", id)`` parts) to a reply.
It imports nothing from ``averitec_tools``. Template files are read the organisers' way
(``open().readlines()`` joined).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

Ask = Callable[[Any], str]
THRESHOLD_RATING = 9


def read_templates(clone: Path) -> dict[str, str]:
    def joined(name: str, sep: str) -> str:
        with open(clone / "templates" / name) as fh:
            return sep.join(fh.readlines())

    return {"evidence": joined("evid_evaluation_text_seperate.txt", ""), "questions": joined("ques_evaluation_text.txt", ""),
            "justification": joined("justi_evaluation_text.txt", ""), "qa": joined("qa_to_evid_demos.txt", "\n")}


def gen_incontext_input_textonly(pred: str, ref: str, demos: str) -> str:
    texts = [demos, "\n[PRED]: " + pred, "[REF]: " + ref]
    return "\n".join(texts)


def score_extraction(feedback: str) -> dict[str, Any]:
    pred_in_ref = feedback.split("[PRED in REF]: ")[-1].split("\n")[0].split(";")[0].strip()
    ref_in_pred = feedback.split("[REF in PRED]: ")[-1].split("\n")[0].split(";")[0].strip()
    score = {"ref_in_pred": int(ref_in_pred) if ref_in_pred.isdigit() else 0,
             "pred_in_ref": int(pred_in_ref) if pred_in_ref.isdigit() else 0}
    score["detailed_ref_in_pred"] = ";".join(feedback.split("[REF in PRED]: ")[-1].split("\n")[0].split(";")[1:]).strip()
    score["detailed_pred_in_ref"] = ";".join(feedback.split("[PRED in REF]: ")[-1].split("\n")[0].split(";")[1:]).strip()
    return score


def convert_qa_format(question_info: dict[str, Any], templates: dict[str, str], ask: Ask) -> dict[str, Any]:
    answers = question_info["answers"]
    ques_txt = question_info["question"].replace("\n", "; ")
    related_images: list[str] = []
    ques_img_str, ans_text = [], []
    if len(question_info["input_images"]):
        for image in question_info["input_images"]:
            related_images.append(image)
            ques_img_str.append("[IMG_" + str(len(related_images)) + "]")
    for answer in answers:
        if answer["answer_type"] == "Image":
            for image in answer["image_answers"]:
                related_images.append(image)
                ans_text.append("[IMG_" + str(len(related_images)) + "]")
        else:
            ans_text.append(answer["answer_text"])
        if answer["answer_type"] == "Boolean":
            ans_text.append(answer["boolean_explanation"])
    ans = " ".join(ans_text).replace("\n", "; ")
    evid_ques = ques_txt + ", ".join(ques_img_str) if len(ques_img_str) else ques_txt
    prompt = "\n".join([templates["qa"], "[QUES]: " + evid_ques, "[ANS]: " + ans, "[STAT]:"])
    statement = ask(prompt).replace("[STAT]:", "").strip()
    return {"text": statement, "images": related_images}


def compute_image_scores(pred_evid: list[dict[str, Any]], ref_evid: list[dict[str, Any]], score: dict[str, Any],
                         ask: Ask, strings: tuple[str, str, str]) -> dict[str, list[dict[str, Any]]]:
    """Both loops of ``ref_eval.py`` at f6f361d (the precision side asks even when one set is empty)."""
    intro, between, instruction = strings
    out: dict[str, list[dict[str, Any]]] = {"pred_in_ref": [], "ref_in_pred": []}

    def rate(imgs_pred: list[Any], imgs_ref: list[Any]) -> str:
        parts = [("text", intro), *[("image", i) for i in imgs_pred], ("text", between),
                 *[("image", i) for i in imgs_ref], ("text", instruction)]
        return ask(parts)

    for detail in re.findall(r"\(.*?\)", score["detailed_pred_in_ref"]):
        info = detail[1:-1].split(",")
        try:
            pred_idx, ref_idx = int(info[0].split("_")[-1]), int(info[1].split("_")[-1])
            imgs_pred, imgs_ref = pred_evid[pred_idx - 1]["images"], ref_evid[ref_idx - 1]["images"]
            feedback = "10" if len(imgs_pred) == 0 and len(imgs_ref) == 0 else rate(imgs_pred, imgs_ref)
        except Exception:  # noqa: BLE001 - their bare except
            feedback = "10"
        out["pred_in_ref"].append({"info": info, "score": feedback})
    for detail in re.findall(r"\(.*?\)", score["detailed_ref_in_pred"]):
        info = detail[1:-1].split(",")
        try:
            pred_idx, ref_idx = int(info[1].split("_")[-1]), int(info[0].split("_")[-1])
            imgs_pred, imgs_ref = pred_evid[pred_idx - 1]["images"], ref_evid[ref_idx - 1]["images"]
            feedback = "10" if len(imgs_pred) == 0 or len(imgs_ref) == 0 else rate(imgs_pred, imgs_ref)
        except Exception:  # noqa: BLE001
            feedback = "10"
        out["ref_in_pred"].append({"info": info, "score": feedback})
    return out


def compute_scores(score: dict[str, Any], len_gt: int, len_val: int, *, none: bool = False) -> tuple[Any, Any, Any]:
    if len_val == 0 or len_gt == 0:
        return (None, None, None) if none else (0.0, 0.0, 0.0)
    precision, recall = score["pred_in_ref"] / len_val, score["ref_in_pred"] / len_gt
    precision, recall = max(precision, 0), max(recall, 0)
    recall, precision = min(recall, 1.0), min(precision, 1.0)
    f1 = 0.0 if precision == 0 and recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def get_auto_recall(image_scores: dict[str, list[dict[str, Any]]], len_ref: int, len_pred: int) -> Any:
    counts = {}
    for side, (p_pos, r_pos) in (("pred_in_ref", (0, 1)), ("ref_in_pred", (1, 0))):
        seen: dict[int, int] = defaultdict(int)
        n = 0
        for info in image_scores[side]:
            try:
                pred_idx = int(info["info"][p_pos].split("_")[-1])
                ref_idx = int(info["info"][r_pos].split("_")[-1])
            except Exception:  # noqa: BLE001
                continue
            key = pred_idx if side == "pred_in_ref" else ref_idx
            if key in seen:
                continue
            seen[key] += 1
            try:
                if int(info["score"]) < THRESHOLD_RATING:
                    continue
                n += 1
            except Exception:  # noqa: BLE001
                continue
        counts[side] = n
    return compute_scores(counts, len_ref, len_pred, none=True)[1]


def justi_recall(raw: str, score: dict[str, Any]) -> float:
    pred_facts = raw.strip().split("[PRED in REF Exp]: ")[1].split("[REF in PRED]:")[0].strip()
    ref_facts = raw.strip().split("[REF in PRED Exp]:")[-1].strip()
    return compute_scores(score, len(re.findall(r"\b\d+\.\s", ref_facts)), len(re.findall(r"\b\d+\.\s", pred_facts)))[1]


def evaluate_claim(row: dict[str, Any], pred: dict[str, Any], templates: dict[str, str], ask: Ask,
                   strings: tuple[str, str, str]) -> dict[str, Any]:
    """One iteration of ``eval_offline.py``'s loop; ``None`` scores where their code would raise."""
    gt_evid = [convert_qa_format(qa, templates, ask) for qa in row["questions"]]
    verdict = 1.0 if pred["verdict"].lower().strip() == row["label"].lower() else 0.0
    p = ". ".join(str(k + 1) + ". " + e["text"] for k, e in enumerate(pred["evidence"]))
    r = ". ".join(str(k + 1) + ". " + e["text"] for k, e in enumerate(gt_evid))
    feedback = ask([("text", gen_incontext_input_textonly(p, r, templates["evidence"]))])
    images = compute_image_scores(pred["evidence"], gt_evid, score_extraction(feedback), ask, strings)
    evid = get_auto_recall(images, len(gt_evid), len(pred["evidence"]))
    j_feedback = ask([("text", gen_incontext_input_textonly(pred["justification"], row["justification"],
                                                            templates["justification"]))])
    try:
        justi = justi_recall(j_feedback, score_extraction(j_feedback))
    except IndexError:
        justi = None
    qs, q_feedback = pred["questions"], ""
    try:
        qp = qs if qs[0][0].isdigit() else [str(k + 1) + ". " + q for k, q in enumerate(qs)]
        gold_q = [str(k + 1) + ". " + q["question"] for k, q in enumerate(row["questions"])]
        q_feedback = ask([("text", gen_incontext_input_textonly(" ".join(qp), " ".join(gold_q), templates["questions"]))])
        ques = compute_scores(score_extraction(q_feedback), len(row["questions"]), len(qs))[1]
    except IndexError:
        ques = None
    return {"ques_score": ques, "evid_score": evid, "verdict_score": verdict, "justi_score": justi,
            "intermediate_info": {"ques_feedback": q_feedback if ques is not None else None,
                                  "ques_score": score_extraction(q_feedback) if ques is not None else None,
                                  "justi_feedback": j_feedback, "justi_score": score_extraction(j_feedback),
                                  "evid_feedback": feedback, "evid_image_score": images,
                                  "evid_text_score": score_extraction(feedback)}}


def notebook(rows: list[dict[str, Any]], threshold: float = 0.4, ge: bool = False) -> dict[str, float]:
    """``Eval_Score_Compute.ipynb``'s aggregation (``>=`` with ``ge``, for the fork rule)."""
    q = e = v = j = 0.0
    for row in rows:
        q += row["ques_score"]
        e += row["evid_score"]
        if (row["evid_score"] >= threshold) if ge else (row["evid_score"] > threshold):
            v += row["verdict_score"]
            j += row["justi_score"]
    n = len(rows)
    return {"question": q / n, "evidence": e / n, "verdict": v / n, "justification": j / n}
