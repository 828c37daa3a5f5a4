"""Parameter fitting on a simulated learner whose memory differs from FSRS's defaults."""

import random
from datetime import UTC, datetime, timedelta

import fsrs
import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token

from quizzes.models import Card
from tests.conftest import http_call, in_parallel
from tutor.review.fit_guard import Entry, holdout_predictions, metrics
from tutor.review.models import CardState, LearnerSettings, OptimizationRun, Reschedule, ReviewLog, State
from tutor.review.optimizer import ACTIVE_FIT_STALE_AFTER, MIN_REVIEWS, request_optimization, run_optimization
from tutor.review.services import learner_settings, state_differences

pytestmark = pytest.mark.django_db

# A learner who forgets much faster than the defaults assume: low initial stabilities and slow
# stability growth after each successful review.
TRUE_PARAMS = list(fsrs.scheduler.DEFAULT_PARAMETERS)
TRUE_PARAMS[0:4] = [0.05, 0.1, 0.3, 1.0]
TRUE_PARAMS[8] = 0.8


def simulate(user, cards, days=150, seed=7, true_params=TRUE_PARAMS):
    """Review each card when the default scheduler says it is due; recall with the TRUE model."""
    rng = random.Random(seed)
    truth = fsrs.Scheduler(parameters=true_params, enable_fuzzing=False)
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
        Entry(c * 2, r, at)
        for c, r, at in ReviewLog.objects.order_by("reviewed_at").values_list("card_id", "rating", "reviewed_at")
    ]
    cutoff = entries[int(len(entries) * 0.8)].at
    true = metrics(holdout_predictions(fsrs.Scheduler(parameters=TRUE_PARAMS, enable_fuzzing=False), entries, cutoff))
    default = metrics(holdout_predictions(fsrs.Scheduler(enable_fuzzing=False), entries, cutoff))
    assert true.n >= 20
    assert true.log_loss < default.log_loss


def _optimize(learner) -> OptimizationRun:
    run = run_optimization(OptimizationRun.objects.create(user=learner).pk)
    run.refresh_from_db()
    assert run.status == "done", run.message
    assert run.holdout_reviews >= 20 and run.train_reviews > 0 and "Log loss on your" in run.message
    assert set(run.evaluation["metrics"]) == {"fitted", "current", "defaults"}
    for m in run.evaluation["metrics"].values():
        assert m["n"] == run.holdout_reviews and 0 < m["log_loss"] < 2 and 0 <= m["rmse_bins"] <= 1
        assert m["auc"] is None or 0 <= m["auc"] <= 1
    assert len(run.curve["current"]) == len(run.curve["fitted"]) > 5
    return run


def test_a_fit_that_beats_the_parameters_in_use_and_the_defaults_by_more_than_its_noise_is_adopted(
    learner, shipped_course
):
    simulate(learner, list(Card.objects.order_by("pk")[:100]), days=200)
    run = _optimize(learner)
    assert run.adopted, run.message
    assert run.evaluation["vs_current"]["lower_bound"] > 0 and run.evaluation["vs_defaults"]["lower_bound"] > 0
    assert LearnerSettings.objects.get(user=learner).parameters == run.fitted_parameters
    # Adopting re-schedules every card from the log with the new parameters, in batches on the worker.
    job = Reschedule.objects.get(user=learner)
    assert job.reason == Reschedule.Reason.OPTIMIZATION and job.status == Reschedule.Status.DONE
    assert job.done == job.total == CardState.objects.filter(user=learner).count() > 0
    assert state_differences(learner) == []


def test_a_fit_whose_gain_is_within_its_noise_is_not_adopted(learner, shipped_course):
    """Too little history to tell: the fit predicts a little better on average, but not significantly."""
    simulate(learner, list(Card.objects.order_by("pk")[:40]))
    run = _optimize(learner)
    assert not run.adopted and run.evaluation["vs_current"]["lower_bound"] <= 0
    assert LearnerSettings.objects.get(user=learner).parameters is None
    assert "within its noise" in run.message or "does not predict" in run.message


def test_a_fit_is_also_compared_with_the_defaults(learner, shipped_course):
    """A learner whose memory matches the defaults but who uses badly fitted parameters: a new fit beats the
    parameters in use, yet not the defaults, so it is not adopted, and the report shows the defaults ahead."""
    simulate(learner, list(Card.objects.order_by("pk")[:100]), days=200, true_params=fsrs.scheduler.DEFAULT_PARAMETERS)
    current = learner_settings(learner)
    current.parameters = TRUE_PARAMS
    current.save()
    run = _optimize(learner)
    scores = run.evaluation["metrics"]
    assert scores["defaults"]["log_loss"] < scores["current"]["log_loss"]
    assert run.evaluation["vs_current"]["mean_gain"] > 0 and not run.evaluation["vs_defaults"]["significant"]
    assert not run.adopted and LearnerSettings.objects.get(user=learner).parameters == TRUE_PARAMS


def test_too_few_reviews_fails_with_a_reason(learner, shipped_course):
    run = run_optimization(OptimizationRun.objects.create(user=learner).pk)
    assert run.status == "failed" and "at least 200 reviews" in run.message


def _enough_reviews(user, cards) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ReviewLog.objects.bulk_create(
        ReviewLog(
            user=user,
            card=cards[i % len(cards)],
            rating=3,
            reviewed_at=start + timedelta(hours=i),
            state_before=State.NEW,
            idempotency_key=f"k{i}",
        )
        for i in range(MIN_REVIEWS)
    )


def test_a_second_fit_while_one_is_queued_is_a_429(learner_client, learner, shipped_course):
    _enough_reviews(learner, list(Card.objects.order_by("pk")[:20]))
    OptimizationRun.objects.create(user=learner)  # queued, waiting for a worker
    response = learner_client.post("/api/review/optimization/", {}, content_type="application/json")
    assert response.status_code == 429 and "already queued" in response.json()["detail"]
    assert OptimizationRun.objects.filter(user=learner).count() == 1


def test_a_fit_lost_long_ago_does_not_block_the_next(learner, shipped_course):
    _enough_reviews(learner, list(Card.objects.order_by("pk")[:20]))
    lost = OptimizationRun.objects.create(user=learner, status=OptimizationRun.Status.RUNNING)
    OptimizationRun.objects.filter(pk=lost.pk).update(created_at=timezone.now() - ACTIVE_FIT_STALE_AFTER)
    assert request_optimization(user=learner).status == OptimizationRun.Status.QUEUED


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_parallel_requests_queue_one_fit(asgi_server, learner, shipped_course):
    _enough_reviews(learner, list(Card.objects.order_by("pk")[:20]))
    token = Token.objects.create(user=learner).key
    url = f"{asgi_server}/api/review/optimization/"
    answers = in_parallel(10, lambda: http_call("POST", url, token, {}))
    assert sorted(status for status, _ in answers) == [202] + [429] * 9, answers
    assert OptimizationRun.objects.filter(user=learner).count() == 1
