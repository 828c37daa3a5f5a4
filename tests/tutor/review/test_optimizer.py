"""Parameter fitting on a simulated learner whose memory differs from FSRS's defaults."""

import random
from datetime import UTC, datetime, timedelta

import fsrs
import pytest

from quizzes.models import Card
from tutor.review.models import CardState, LearnerSettings, OptimizationRun, ReviewLog, State
from tutor.review.optimizer import holdout_log_loss, run_optimization
from tutor.review.services import state_differences

pytestmark = pytest.mark.django_db

# A learner who forgets much faster than the defaults assume: low initial stabilities and slow
# stability growth after each successful review.
TRUE_PARAMS = list(fsrs.scheduler.DEFAULT_PARAMETERS)
TRUE_PARAMS[0:4] = [0.05, 0.1, 0.3, 1.0]
TRUE_PARAMS[8] = 0.8


def simulate(user, cards, days=150, seed=7):
    """Review each card when the default scheduler says it is due; recall with the TRUE model."""
    rng = random.Random(seed)
    truth = fsrs.Scheduler(parameters=TRUE_PARAMS, enable_fuzzing=False)
    schedule = fsrs.Scheduler(enable_fuzzing=False)
    start = datetime(2026, 1, 1, 8, tzinfo=UTC)
    rows = []
    for card in cards:
        sched_card, true_card = fsrs.Card(card_id=card.pk), fsrs.Card(card_id=card.pk)
        at = start + timedelta(minutes=rng.randint(0, 600))
        while at < start + timedelta(days=days):
            if true_card.last_review is None:
                recalled = False  # a new card has not been learned yet
            elif (at - true_card.last_review).days < 1:
                recalled = True  # same-day learning steps
            else:
                recalled = rng.random() < truth.get_card_retrievability(true_card, at)
            rating = fsrs.Rating.Good if recalled else fsrs.Rating.Again
            rows.append(
                ReviewLog(
                    user=user,
                    card=card,
                    rating=int(rating),
                    reviewed_at=at,
                    state_before=State.NEW,
                    idempotency_key=f"sim-{card.pk}-{len(rows)}",
                )
            )
            true_card, _ = truth.review_card(true_card, rating, at)
            sched_card, _ = schedule.review_card(sched_card, rating, at)
            at = max(sched_card.due, at + timedelta(minutes=1)) + timedelta(minutes=rng.randint(0, 120))
    ReviewLog.objects.bulk_create(rows)
    return len(rows)


def test_holdout_log_loss_prefers_the_true_parameters(learner, shipped_course):
    simulate(learner, list(Card.objects.order_by("pk")[:40]))
    entries = [
        (c * 2, r, at, None)
        for c, r, at in ReviewLog.objects.order_by("reviewed_at").values_list("card_id", "rating", "reviewed_at")
    ]
    cutoff = entries[int(len(entries) * 0.8)][2]
    true_loss, n = holdout_log_loss(fsrs.Scheduler(parameters=TRUE_PARAMS, enable_fuzzing=False), entries, cutoff)
    default_loss, _ = holdout_log_loss(fsrs.Scheduler(enable_fuzzing=False), entries, cutoff)
    assert n >= 20
    assert true_loss < default_loss


def test_fitted_parameters_are_adopted_only_when_they_predict_recent_reviews_better(learner, shipped_course):
    total = simulate(learner, list(Card.objects.order_by("pk")[:40]))
    assert total >= 200
    run = run_optimization(OptimizationRun.objects.create(user=learner).pk)
    run.refresh_from_db()
    assert run.status == "done", run.message
    assert run.holdout_reviews >= 20 and run.train_reviews > 0
    assert run.adopted == (run.fitted_log_loss < run.current_log_loss)
    assert "Log loss on your" in run.message
    settings_obj = LearnerSettings.objects.get(user=learner)
    assert (settings_obj.parameters == run.fitted_parameters) == run.adopted
    assert len(run.curve["current"]) == len(run.curve["fitted"]) > 5
    if run.adopted:
        # Adopting re-derives every card state from the log with the new parameters.
        assert CardState.objects.filter(user=learner).exists()
        assert state_differences(learner) == []


def test_too_few_reviews_fails_with_a_reason(learner, shipped_course):
    run = run_optimization(OptimizationRun.objects.create(user=learner).pk)
    assert run.status == "failed" and "at least 200 reviews" in run.message
