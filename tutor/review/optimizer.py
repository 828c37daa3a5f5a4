"""Per-learner FSRS parameter fitting with an honest check before adoption.

The learner's most recent reviews (by time) are held out and never used for fitting. Fitted
parameters are adopted only if they predict those held-out reviews better, by log loss, than
the parameters in use. A blind refit on little data can predict worse than the defaults.

Runs in a Celery worker: fsrs's optimizer needs torch, which the web process never imports.
"""

from __future__ import annotations

import math
import statistics
from datetime import UTC, datetime, timedelta

import fsrs
from django.db import transaction
from django.utils import timezone

from tutor.review.models import CardState, LearnerSettings, OptimizationRun, ReviewLog, State
from tutor.review.scheduling import scheduler_for
from tutor.review.services import learner_settings, rebuild_learner
from tutor.review.tasks import optimize_parameters as optimize_parameters_task
from workers.queues import DEFAULT, send_on_commit

MIN_REVIEWS = 200  # fewer and the fit is noise
HOLDOUT_FRACTION = 0.2
MIN_HOLDOUT_EVALUATED = 20  # held-out reviews a day or more after the previous one
CURVE_DAYS = [0, 1, 2, 3, 5, 7, 10, 14, 21, 30, 45, 60, 90]


class NotEnoughReviews(Exception):
    pass


def request_optimization(*, user) -> OptimizationRun:
    """Create a run and queue it for a worker. The learner sees the run even if the broker is down."""
    total = ReviewLog.objects.filter(user=user, undone_at__isnull=True).count()
    run = OptimizationRun.objects.create(user=user)
    if total < MIN_REVIEWS:
        _finish(
            run,
            status=OptimizationRun.Status.FAILED,
            message=f"Optimization needs at least {MIN_REVIEWS} reviews; you have {total}.",
        )
        return run
    send_on_commit(
        optimize_parameters_task,
        args=[run.pk],
        queue=DEFAULT,
        on_broker_down=lambda reason: _finish(
            run, status=OptimizationRun.Status.FAILED, message=f"Could not queue the optimization: {reason}."
        ),
    )
    return run


def _finish(run: OptimizationRun, *, status: str, message: str = "") -> None:
    run.status = status
    run.message = message
    run.finished_at = timezone.now()
    run.save()


def _entries(user) -> list[tuple[int, int, datetime, int | None]]:
    """(sequence id, rating, time, duration) oldest first; each card direction is its own sequence."""
    rows = (
        ReviewLog.objects.filter(user=user, undone_at__isnull=True)
        .order_by("reviewed_at", "id")
        .values_list("card_id", "reverse", "rating", "reviewed_at", "duration_ms")
    )
    return [(card_id * 2 + int(reverse), rating, at, dur) for card_id, reverse, rating, at, dur in rows]


def holdout_log_loss(scheduler: fsrs.Scheduler, entries, cutoff: datetime) -> tuple[float, int]:
    """Mean log loss of the scheduler's recall predictions on reviews at or after `cutoff`.

    Every review (before and after the cutoff) advances the card, so each prediction uses all
    history before it; only reviews a day or more after the previous one are scored, as in FSRS.
    """
    cards: dict[int, fsrs.Card] = {}
    total, n = 0.0, 0
    for seq, rating, at, _ in entries:
        card = cards.get(seq) or fsrs.Card(card_id=seq, due=at)
        if at >= cutoff and card.last_review is not None and (at - card.last_review).days >= 1:
            p = min(max(scheduler.get_card_retrievability(card, at), 1e-6), 1 - 1e-6)
            y = 1 if rating > 1 else 0
            total -= y * math.log(p) + (1 - y) * math.log(1 - p)
            n += 1
        cards[seq], _ = scheduler.review_card(card, fsrs.Rating(rating), at)
    return (total / n if n else float("nan")), n


def forgetting_curve(scheduler: fsrs.Scheduler, stability: float) -> list[dict]:
    start = datetime(2000, 1, 1, tzinfo=UTC)
    card = fsrs.Card(
        card_id=1, state=fsrs.State.Review, stability=stability, difficulty=5.0, last_review=start, due=start
    )
    return [
        {"days": d, "recall": round(scheduler.get_card_retrievability(card, start + timedelta(days=d)), 4)}
        for d in CURVE_DAYS
    ]


def run_optimization(run_id: int) -> OptimizationRun:
    run = OptimizationRun.objects.select_related("user").get(pk=run_id)
    run.status = OptimizationRun.Status.RUNNING
    run.save(update_fields=["status"])
    try:
        _optimize(run)
    except NotEnoughReviews as exc:
        _finish(run, status=OptimizationRun.Status.FAILED, message=str(exc))
    except Exception as exc:
        _finish(run, status=OptimizationRun.Status.FAILED, message=f"Optimization failed: {exc}")
        raise
    return run


def _optimize(run: OptimizationRun) -> None:
    user = run.user
    settings_obj = learner_settings(user)
    entries = _entries(user)
    if len(entries) < MIN_REVIEWS:
        raise NotEnoughReviews(f"Optimization needs at least {MIN_REVIEWS} reviews; you have {len(entries)}.")
    cutoff = entries[int(len(entries) * (1 - HOLDOUT_FRACTION))][2]
    train = [
        fsrs.ReviewLog(card_id=seq, rating=fsrs.Rating(r), review_datetime=at, review_duration=d)
        for seq, r, at, d in entries
        if at < cutoff
    ]
    current = scheduler_for(settings_obj)
    current_loss, evaluated = holdout_log_loss(current, entries, cutoff)
    if evaluated < MIN_HOLDOUT_EVALUATED:
        raise NotEnoughReviews(
            f"Only {evaluated} recent reviews came a day or more after the previous one; "
            f"{MIN_HOLDOUT_EVALUATED} are needed to judge new parameters. Keep reviewing over more days."
        )
    fitted_params = list(fsrs.Optimizer(train).compute_optimal_parameters())
    fitted = scheduler_for(settings_obj, parameters=fitted_params)
    fitted_loss, _ = holdout_log_loss(fitted, entries, cutoff)

    stabilities = list(CardState.objects.filter(user=user, state=State.REVIEW).values_list("stability", flat=True)) or [
        fitted.parameters[2]
    ]
    median_s = float(statistics.median(stabilities))
    run.train_reviews = len(train)
    run.holdout_reviews = evaluated
    run.current_parameters = list(current.parameters)
    run.fitted_parameters = fitted_params
    run.current_log_loss = current_loss
    run.fitted_log_loss = fitted_loss
    run.curve = {
        "stability_days": median_s,
        "current": forgetting_curve(current, median_s),
        "fitted": forgetting_curve(fitted, median_s),
    }
    run.adopted = fitted_loss < current_loss
    with transaction.atomic():
        if run.adopted:
            LearnerSettings.objects.filter(pk=settings_obj.pk).update(parameters=fitted_params)
            rebuild_learner(user)
        verdict = (
            "adopted: they predict your recent reviews better"
            if run.adopted
            else "kept the current parameters: the fitted ones predict your recent reviews worse"
        )
        _finish(
            run,
            status=OptimizationRun.Status.DONE,
            message=f"Log loss on your {evaluated} most recent reviews: current {current_loss:.4f}, "
            f"fitted {fitted_loss:.4f}; {verdict}.",
        )
