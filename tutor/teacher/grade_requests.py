"""Grading a typed answer shown at the reveal, without recording a review.

Numeric estimates and multiple-choice predictions are checked at once (tutor.review.answer_check).
Interview and recall answers are graded by the teacher against the card's rubric on a worker, so a
slow model never blocks a web process; the learner's page polls the AnswerGrade for the verdict.
"""

from __future__ import annotations

from django.utils import timezone

from quizzes.models import Card
from tutor.errors import DomainError
from tutor.review.answer_check import Grade, check_answer
from tutor.teacher.models import AnswerGrade
from tutor.teacher.rubric_grading import grade_against_rubric, keyword_grade
from tutor.teacher.tasks import grade_typed_answer as grade_typed_answer_task
from workers.queues import DEFAULT, send_on_commit

GRADED_BY_TEACHER = (Card.Kind.INTERVIEW, Card.Kind.RECALL)


def grade_now_or_queue(*, user, card_id: int, answer: str) -> Grade | AnswerGrade | None:
    """A Grade for a checkable answer, a queued AnswerGrade for the teacher's kinds, None for the rest."""
    card = Card.objects.filter(pk=card_id, retired=False).first()
    if card is None:
        raise DomainError("No such card.", "card", status=404)
    if card.kind in GRADED_BY_TEACHER:
        return request_grade(user=user, card=card, answer=answer)
    return check_answer(card, answer)


def request_grade(*, user, card: Card, answer: str) -> AnswerGrade:
    """Queue rubric grading; with the broker down, grade here with the torch-free keyword check and say so."""
    grade = AnswerGrade.objects.create(user=user, card=card, answer=answer)

    def grade_here(reason: str) -> None:
        result = keyword_grade(card, answer)
        result["notice"] = f"Could not queue the grading: {reason[:160]}; graded here with a keyword check."
        _store(grade, AnswerGrade.Status.DONE, result)

    send_on_commit(grade_typed_answer_task, args=[grade.pk], queue=DEFAULT, on_broker_down=grade_here)
    return grade


def run_grade(grade_id: int) -> AnswerGrade:
    """Called by the worker's task: grade one queued answer against its card's rubric."""
    grade = AnswerGrade.objects.select_related("card").get(pk=grade_id)
    if grade.status != AnswerGrade.Status.QUEUED:
        return grade
    try:
        result = grade_against_rubric(grade.card, grade.answer)
    except Exception as exc:
        _store(grade, AnswerGrade.Status.FAILED, {"graded": False, "detail": f"Grading failed: {exc}"})
        raise
    _store(grade, AnswerGrade.Status.DONE, result)
    return grade


def _store(grade: AnswerGrade, status: str, result: dict) -> None:
    grade.status = status
    grade.result = result
    grade.finished_at = timezone.now()
    grade.save(update_fields=["status", "result", "finished_at"])
