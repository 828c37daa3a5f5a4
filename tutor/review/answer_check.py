"""Checking the answers that can be checked mechanically (numeric estimates, multiple-choice predictions),
and the rating each verdict suggests. Rubric grading of typed answers is the teacher's (tutor/teacher)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from quizzes.models import Card
from tutor.errors import DomainError

_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")


@dataclass(frozen=True)
class Grade:
    correct: bool
    suggested_rating: int
    detail: str


def parse_number(text: str) -> float:
    """Accepts '1024', '1,024', '1.5e3', '2.5x', '40 %'; rejects anything else with a clear message."""
    cleaned = text.strip().replace(",", "").replace("_", "").replace(" ", "").rstrip("x×%")
    if not _NUMBER.match(cleaned):
        raise DomainError(f"Type a number (e.g. 1024 or 1.5e3), not {text.strip()[:40]!r}.", "answer")
    value = float(cleaned)
    if not math.isfinite(value):
        raise DomainError("Type a finite number.", "answer")
    return value


def check_numeric(card: Card, answer: str) -> Grade:
    value = parse_number(answer)
    target = card.numeric_answer or 0.0
    tolerance = card.tolerance or 0.0
    error = abs(value - target) / abs(target) if target else abs(value)
    if error <= tolerance:
        return Grade(True, 3, f"Within ±{tolerance:.0%}: you said {value:g}, the answer is {target:g} {card.unit}.")
    if error <= 2 * tolerance:
        return Grade(False, 2, f"Close: off by {error:.0%} (the tolerance is ±{tolerance:.0%}).")
    return Grade(False, 1, f"Off by {error:.0%}: the answer is {target:g} {card.unit}.")


def check_predict(card: Card, answer: str) -> Grade | None:
    """Multiple choice is graded; a free prediction is only shown beside the answer."""
    if not card.choices:
        return None
    if answer not in card.choices:
        raise DomainError("Pick one of the choices.", "answer")
    if answer == card.answer:
        return Grade(True, 3, "Your prediction was right.")
    return Grade(False, 1, f"You predicted “{answer}”.")


def check_answer(card: Card, answer: str) -> Grade | None:
    """The verdict on a numeric or multiple-choice answer; None for kinds without a checkable answer."""
    if card.kind == Card.Kind.NUMERIC:
        return check_numeric(card, answer)
    if card.kind == Card.Kind.PREDICT:
        return check_predict(card, answer)
    return None
