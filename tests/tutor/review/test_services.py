import uuid
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import fsrs
import pytest
from django.utils import timezone

from quizzes.models import Card
from tutor.errors import DomainError
from tutor.review.models import CardState, ReviewLog, State
from tutor.review.services import (
    learner_settings,
    rebuild_learner,
    state_differences,
    submit_review,
    undo_last_review,
)


@contextmanager
def refused(status: int, match: str | None = None):
    """The service refuses with a DomainError that the API answers with `status`."""
    with pytest.raises(DomainError, match=match) as info:
        yield info
    assert info.value.status == status


pytestmark = pytest.mark.django_db


def key() -> str:
    return uuid.uuid4().hex


def review(user, card, rating, at=None, **kw):
    return submit_review(user=user, card_id=card.pk, rating=rating, idempotency_key=key(), reviewed_at=at, **kw)


@pytest.fixture
def card(shipped_course):
    return Card.objects.filter(kind="basic").order_by("pk").first()


def test_scheduling_matches_fsrs_called_directly_on_the_same_history(learner, card):
    start = datetime(2026, 1, 1, 9, tzinfo=UTC)
    ratings = [3, 3, 1, 3, 4, 2, 3]
    times = [
        start,
        start + timedelta(minutes=1),
        start + timedelta(days=1),
        start + timedelta(days=1, minutes=10),
        start + timedelta(days=3),
        start + timedelta(days=12),
        start + timedelta(days=30),
    ]
    scheduler = fsrs.Scheduler(enable_fuzzing=False, maximum_interval=3650)
    expected = fsrs.Card(card_id=card.pk)
    for rating, at in zip(ratings, times, strict=True):
        outcome = submit_review(user=learner, card_id=card.pk, rating=rating, idempotency_key=key(), reviewed_at=at)
        expected, _ = scheduler.review_card(expected, fsrs.Rating(rating), at)
        state = outcome.state
        assert (state.state, state.step, state.due) == (int(expected.state), expected.step, expected.due)
        assert state.stability == pytest.approx(expected.stability)
        assert state.difficulty == pytest.approx(expected.difficulty)


def test_rebuild_from_the_log_equals_the_live_state(learner, shipped_course):
    start = timezone.now() - timedelta(days=40)
    cards = list(Card.objects.order_by("pk")[:12])
    for day in range(0, 40, 3):
        for i, card in enumerate(cards):
            review(learner, card, [1, 2, 3, 4][(day + i) % 4], at=start + timedelta(days=day, minutes=i))
    live = {
        (s.card_id, s.reverse): (s.state, s.step, s.stability, s.difficulty, s.due, s.reps, s.lapses)
        for s in CardState.objects.filter(user=learner)
    }
    assert state_differences(learner) == []
    rebuild_learner(learner)
    rebuilt = {
        (s.card_id, s.reverse): (s.state, s.step, s.stability, s.difficulty, s.due, s.reps, s.lapses)
        for s in CardState.objects.filter(user=learner)
    }
    assert rebuilt == live


def test_the_same_idempotency_key_records_one_review(learner, card):
    k = key()
    first = submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key=k)
    again = submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key=k)
    assert not first.duplicate and again.duplicate
    assert again.review.pk == first.review.pk
    assert ReviewLog.objects.filter(user=learner).count() == 1
    assert CardState.objects.get(user=learner, card=card).reps == 1


def test_a_second_tab_with_a_stale_version_cannot_advance_the_card(learner, card):
    submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key=key(), expected_version=0)
    with refused(409):
        submit_review(user=learner, card_id=card.pk, rating=4, idempotency_key=key(), expected_version=0)
    assert ReviewLog.objects.filter(user=learner).count() == 1


def test_undo_marks_the_review_and_rebuilds_the_card(learner, card):
    review(learner, card, 3)
    before = CardState.objects.get(user=learner, card=card)
    second = review(learner, card, 1)
    undone = undo_last_review(user=learner)
    assert undone.pk == second.review.pk and undone.undone_at is not None
    assert ReviewLog.objects.filter(user=learner).count() == 2  # the row is kept
    after = CardState.objects.get(user=learner, card=card)
    assert (after.state, after.due, after.reps) == (before.state, before.due, before.reps)
    assert state_differences(learner) == []


def test_undoing_a_cards_only_review_makes_it_new_again(learner, card):
    review(learner, card, 3)
    undo_last_review(user=learner)
    assert not CardState.objects.filter(user=learner, card=card).exists()


def test_undo_with_nothing_to_undo_is_a_clear_error(learner):
    with refused(404, match="no review to undo"):
        undo_last_review(user=learner)


@pytest.mark.parametrize("rating", [0, 5, -1, "3", True])
def test_rating_outside_1_to_4_is_refused(learner, card, rating):
    with refused(400) as info:
        submit_review(user=learner, card_id=card.pk, rating=rating, idempotency_key=key())
    assert info.value.field == "rating"
    assert not ReviewLog.objects.exists()


def test_unknown_card_is_not_found(learner, shipped_course):
    with refused(404):
        submit_review(user=learner, card_id=10**9, rating=3, idempotency_key=key())


def test_retired_card_is_refused(learner, card):
    card.retired = True
    card.save()
    with refused(400, match="retired"):
        review(learner, card, 3)


def test_review_time_in_the_future_is_refused(learner, card):
    with refused(400) as info:
        review(learner, card, 3, at=timezone.now() + timedelta(hours=1))
    assert info.value.field == "reviewed_at"


def test_numeric_answer_is_graded_with_the_cards_tolerance(learner, shipped_course):
    card = Card.objects.filter(kind="numeric").first()
    exact = review(learner, card, 3, answer=str(card.numeric_answer))
    assert exact.grade.correct and exact.grade.suggested_rating == 3
    assert ReviewLog.objects.get(pk=exact.review.pk).answer_correct is True
    card2 = Card.objects.filter(kind="numeric").exclude(pk=card.pk).first()
    off = review(learner, card2, 1, answer=str(card2.numeric_answer * 10))
    assert not off.grade.correct and off.grade.suggested_rating == 1


def test_non_numeric_answer_to_a_numeric_card_is_refused(learner, shipped_course):
    card = Card.objects.filter(kind="numeric").first()
    with refused(400, match="Type a number"):
        review(learner, card, 3, answer="lots")
    assert not ReviewLog.objects.exists()


def test_predict_guess_is_stored_with_the_review(learner, shipped_course):
    card = Card.objects.filter(kind="predict").exclude(choices=[]).first()
    wrong = next(c for c in card.choices if c != card.answer)
    outcome = review(learner, card, 1, answer=wrong)
    stored = ReviewLog.objects.get(pk=outcome.review.pk)
    assert stored.answer == wrong and stored.answer_correct is False


def test_reverse_direction_only_for_reversible_cards(learner, shipped_course):
    card = Card.objects.filter(kind="recall").first()
    with refused(400, match="not studied in reverse"):
        review(learner, card, 3, reverse=True)


def test_settings_change_rederives_states_from_the_log(learner, card):
    review(learner, card, 3, at=timezone.now() - timedelta(days=5))
    review(learner, card, 3, at=timezone.now() - timedelta(days=4))
    review(learner, card, 3, at=timezone.now() - timedelta(days=1))
    due_before = CardState.objects.get(user=learner, card=card).due
    s = learner_settings(learner)
    s.desired_retention = 0.97
    s.save()
    rebuild_learner(learner)
    assert CardState.objects.get(user=learner, card=card).due < due_before
    assert state_differences(learner) == []


def test_state_before_is_logged(learner, card):
    first = review(learner, card, 3)
    assert first.review.state_before == State.NEW
