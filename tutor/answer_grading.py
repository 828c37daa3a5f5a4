"""Typed answers to interview and recall cards are graded on a worker (a slow model never
blocks a web process); the learner's page polls for the verdict."""

from __future__ import annotations

from django.utils import timezone

from quizzes.models import Card
from tutor.models import AnswerGrade

GRADED_BY_TEACHER = (Card.Kind.INTERVIEW, Card.Kind.RECALL)


def request_grade(*, user, card: Card, answer: str) -> AnswerGrade:
    from workers.tasks import grade_answer

    grade = AnswerGrade.objects.create(user=user, card=card, answer=answer)
    try:
        grade_answer.apply_async(args=[grade.pk], queue="default")
    except Exception as exc:  # broker down: grade here with the torch-free keyword check, and say so
        from tutor.teacher.grading import keyword_grade

        result = keyword_grade(card, answer)
        result["notice"] = f"The task broker is unavailable ({' '.join(str(exc).split())[:120]}); graded here " \
                           "with a keyword check."
        _store(grade, AnswerGrade.Status.DONE, result)
    return grade


def run_grade(grade_id: int) -> AnswerGrade:
    from tutor.teacher.grading import grade_answer

    grade = AnswerGrade.objects.select_related("card").get(pk=grade_id)
    if grade.status != AnswerGrade.Status.QUEUED:
        return grade
    try:
        result = grade_answer(grade.card, grade.answer)
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
