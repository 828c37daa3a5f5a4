"""Grading a typed answer shown at the reveal, without recording a review.

Numeric estimates and multiple-choice predictions are checked at once (tutor.review.answer_check).
Interview and recall answers are graded by the teacher against the card's rubric on a worker, so a
slow model never blocks a web process; the learner's page polls the AnswerGrade for the verdict.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from quizzes.models import Card
from tutor.errors import DomainError
from tutor.review.answer_check import Grade, check_answer
from tutor.review.services import lock_learner
from tutor.teacher.models import AnswerGrade
from tutor.teacher.rubric_grading import grade_against_rubric, keyword_grade
from tutor.teacher.tasks import grade_typed_answer as grade_typed_answer_task
from workers.queues import DEFAULT, send_on_commit

GRADED_BY_TEACHER = (Card.Kind.INTERVIEW, Card.Kind.RECALL)
# Answers one learner may have waiting for the worker: a page grades one answer at a time, so a few
# cover a retry or a second tab; more would let one learner queue ahead of everyone else's grades.
MAX_QUEUED_GRADES = 3
# A grade queued this long ago without an answer is not waiting any more (a lost task, no worker):
# it does not count against the limit, so a learner is never locked out by it.
QUEUED_GRADE_STALE_AFTER = timedelta(minutes=10)


def grade_now_or_queue(*, user, card_id: int, answer: str) -> Grade | AnswerGrade | None:
    """A Grade for a checkable answer, a queued AnswerGrade for the teacher's kinds, None for the rest."""
    card = Card.objects.filter(pk=card_id, retired=False).first()
    if card is None:
        raise DomainError("No such card.", "card", status=404)
    if card.kind in GRADED_BY_TEACHER:
        return request_grade(user=user, card=card, answer=answer)
    return check_answer(card, answer)


def request_grade(*, user, card: Card, answer: str) -> AnswerGrade:
    """Queue rubric grading; with the broker down, grade here with the torch-free keyword check and say so.
    A learner with MAX_QUEUED_GRADES answers still waiting is refused (429)."""
    with transaction.atomic():
        lock_learner(user)  # parallel requests count and insert one at a time
        waiting = AnswerGrade.objects.filter(
            user=user,
            status=AnswerGrade.Status.QUEUED,
            created_at__gte=timezone.now() - QUEUED_GRADE_STALE_AFTER,
        ).count()
        if waiting >= MAX_QUEUED_GRADES:
            raise DomainError(
                f"You have {waiting} answers waiting to be graded; wait for their grades before sending another.",
                "answer",
                status=429,
            )
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
