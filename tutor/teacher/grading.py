"""The teacher grades a typed answer to an interview card against the card's rubric.

LLM mode asks the model for a JSON verdict (covered and missed key points, whether the answer
is the common wrong one, a suggested rating). Without a model, or when the model fails or
returns something unusable, a keyword check of the key points stands in and says so.
"""

from __future__ import annotations

import json
import re

from quizzes.models import Card
from tutor.teacher import llm, prompts
from tutor.teacher.retrieval import tokenize

KEYWORD_METHOD = "keyword check of the rubric's key points (no language model)"


def _covered(point: str, answer_tokens: set[str]) -> bool:
    tokens = set(tokenize(point))
    return bool(tokens) and len(tokens & answer_tokens) / len(tokens) >= 0.5


def keyword_grade(card: Card, answer: str) -> dict:
    answer_tokens = set(tokenize(answer))
    covered = [p for p in card.key_points if _covered(p, answer_tokens)]
    missed = [p for p in card.key_points if p not in covered]
    share = len(covered) / len(card.key_points) if card.key_points else 0.0
    rating = 3 if share >= 0.75 else 2 if share >= 0.4 else 1
    detail = (f"Your answer touches {len(covered)} of {len(card.key_points)} key points."
              + (f" Missing: {'; '.join(missed)}." if missed else ""))
    return {"graded": True, "method": KEYWORD_METHOD, "covered": covered, "missed": missed,
            "common_wrong_answer": False, "correct": share >= 0.75, "suggested_rating": rating, "detail": detail}


def _parse_verdict(text: str, card: Card) -> dict | None:
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
        rating = int(data["suggested_rating"])
    except (ValueError, KeyError, TypeError):
        return None
    if rating not in (1, 2, 3, 4):
        return None
    covered = [str(x) for x in data.get("covered", []) if isinstance(x, str | int | float)]
    missed = [str(x) for x in data.get("missed", []) if isinstance(x, str | int | float)]
    explanation = str(data.get("explanation", "")).strip()[:1200]
    return {"graded": True, "method": f"graded by the language model ({llm.model_name()})", "covered": covered,
            "missed": missed, "common_wrong_answer": bool(data.get("common_wrong_answer")),
            "correct": rating >= 3, "suggested_rating": rating,
            "detail": explanation or f"Covered {len(covered)} of {len(card.key_points)} key points."}


def grade_interview(card: Card, answer: str) -> dict:
    if not llm.llm_configured():
        return keyword_grade(card, answer)
    messages = prompts.grading_messages(card.prompt, card.answer, card.key_points, card.common_wrong_answer, answer)
    try:
        verdict = _parse_verdict(llm.complete(messages), card)
    except llm.LLMUnavailable as exc:
        result = keyword_grade(card, answer)
        result["notice"] = f"The language model could not grade this ({exc}); a keyword check stood in."
        return result
    if verdict is None:
        result = keyword_grade(card, answer)
        result["notice"] = "The language model's verdict was not usable; a keyword check stood in."
        return result
    return verdict
