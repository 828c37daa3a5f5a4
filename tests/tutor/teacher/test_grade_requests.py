"""Typed answers at the reveal: checked at once, queued for the teacher, or graded here when the broker is down."""

import pytest
from django.utils import timezone

from quizzes.models import Card
from tutor.errors import DomainError
from tutor.review.answer_check import Grade
from tutor.teacher import grade_requests
from tutor.teacher.models import AnswerGrade

pytestmark = pytest.mark.django_db


def test_a_numeric_answer_is_checked_at_once(learner, shipped_course):
    card = Card.objects.filter(kind="numeric").first()
    verdict = grade_requests.grade_now_or_queue(user=learner, card_id=card.pk, answer=str(card.numeric_answer))
    assert isinstance(verdict, Grade) and verdict.correct and verdict.suggested_rating == 3


def test_a_retired_or_missing_card_is_a_404_on_card(learner, shipped_course):
    card = Card.objects.filter(kind="numeric").first()
    card.retired = True
    card.save()
    for card_id in (card.pk, 10**9):
        with pytest.raises(DomainError) as info:
            grade_requests.grade_now_or_queue(user=learner, card_id=card_id, answer="1")
        assert info.value.status == 404 and info.value.field == "card"


def test_with_the_broker_down_an_interview_answer_is_graded_here_and_says_so(
    learner, shipped_course, dead_task, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(grade_requests, "grade_typed_answer_task", dead_task("tutor.grade_answer"))
    card = Card.objects.filter(kind="interview").first()
    with django_capture_on_commit_callbacks(execute=True):
        grade = grade_requests.grade_now_or_queue(user=learner, card_id=card.pk, answer=" ".join(card.key_points))
    grade.refresh_from_db()
    assert isinstance(grade, AnswerGrade) and grade.status == AnswerGrade.Status.DONE
    assert grade.result["graded"] and "the task broker is unavailable" in grade.result["notice"]
    assert "keyword check" in grade.result["notice"]


def test_answers_waiting_long_ago_do_not_count_against_the_limit(learner, shipped_course):
    card = Card.objects.filter(kind="interview").first()
    for _ in range(grade_requests.MAX_QUEUED_GRADES):
        grade_requests.request_grade(user=learner, card=card, answer="fusion saves memory traffic")
    with pytest.raises(DomainError) as info:
        grade_requests.request_grade(user=learner, card=card, answer="one more")
    assert info.value.status == 429
    AnswerGrade.objects.update(created_at=timezone.now() - grade_requests.QUEUED_GRADE_STALE_AFTER)
    assert grade_requests.request_grade(user=learner, card=card, answer="one more").status == "queued"
