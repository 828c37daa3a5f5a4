"""Per-learner FSRS parameter fitting with an honest check before adoption.

The learner's most recent reviews (by time) are held out and never used for fitting. Fitted
parameters are adopted only if they predict those held-out reviews better than both the parameters
in use and the FSRS defaults, significantly (tutor.review.fit_guard states the rule). A blind refit
on little data can predict worse than the defaults. Adoption re-schedules the cards in batches.

Runs in a Celery worker: fsrs's optimizer needs torch, which the web process never imports.
"""

from __future__ import annotations

import statistics
from datetime import UTC, datetime, timedelta

import fsrs
from django.db import transaction
from django.utils import timezone

from tutor.errors import DomainError
from tutor.review.fit_guard import Entry, Verdict, fit_parameters, holdout_cutoff, holdout_predictions, judge
from tutor.review.models import CardState, LearnerSettings, OptimizationRun, Reschedule, ReviewLog, State
from tutor.review.rescheduling import reschedule_here
from tutor.review.scheduling import scheduler_for
from tutor.review.services import learner_settings, lock_learner
from tutor.review.tasks import optimize_parameters as optimize_parameters_task
from workers.queues import DEFAULT, send_on_commit

MIN_REVIEWS = 200  # fewer and the fit is noise
MIN_HOLDOUT_EVALUATED = 20  # held-out reviews a day or more after the previous one
CURVE_DAYS = [0, 1, 2, 3, 5, 7, 10, 14, 21, 30, 45, 60, 90]
# A fit still queued or running after this long is taken for lost (no worker took it, or its worker died)
# and no longer stops the learner from asking for another.
ACTIVE_FIT_STALE_AFTER = timedelta(hours=1)


class NotEnoughReviews(Exception):
    pass


def request_optimization(*, user) -> OptimizationRun:
    """Create a run and queue it for a worker. The learner sees the run even if the broker is down.
    One fit per learner at a time: while one is queued or running, another is refused (429)."""
    total = ReviewLog.objects.filter(user=user, undone_at__isnull=True).count()
    with transaction.atomic():
        lock_learner(user)  # parallel requests count and insert one at a time
        active = OptimizationRun.objects.filter(
            user=user,
            status__in=(OptimizationRun.Status.QUEUED, OptimizationRun.Status.RUNNING),
            created_at__gte=timezone.now() - ACTIVE_FIT_STALE_AFTER,
        ).first()
        if active is not None:
            raise DomainError(
                f"A fit of your parameters is already {active.status}; wait for its result before asking for another.",
                status=429,
            )
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


def _entries(user) -> list[Entry]:
    """The learner's reviews oldest first; each card direction is its own sequence."""
    rows = (
        ReviewLog.objects.filter(user=user, undone_at__isnull=True)
        .order_by("reviewed_at", "id")
        .values_list("card_id", "reverse", "rating", "reviewed_at", "duration_ms")
    )
    return [Entry(card_id * 2 + int(reverse), rating, at) for card_id, reverse, rating, at, _ in rows]


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
    cutoff = holdout_cutoff(entries)
    current = scheduler_for(settings_obj)
    evaluated = len(holdout_predictions(current, entries, cutoff))
    if evaluated < MIN_HOLDOUT_EVALUATED:
        raise NotEnoughReviews(
            f"Only {evaluated} recent reviews came a day or more after the previous one; "
            f"{MIN_HOLDOUT_EVALUATED} are needed to judge new parameters. Keep reviewing over more days."
        )
    fitted_params = fit_parameters(entries, cutoff)
    fitted = scheduler_for(settings_obj, parameters=fitted_params)
    verdict = judge(
        entries,
        cutoff,
        fitted=fitted,
        current=current,
        defaults=scheduler_for(settings_obj, parameters=list(fsrs.scheduler.DEFAULT_PARAMETERS)),
    )

    stabilities = list(CardState.objects.filter(user=user, state=State.REVIEW).values_list("stability", flat=True)) or [
        fitted.parameters[2]
    ]
    median_s = float(statistics.median(stabilities))
    scores = verdict.metrics
    run.train_reviews = sum(1 for e in entries if e.at < cutoff)
    run.holdout_reviews = verdict.evaluated
    run.current_parameters = list(current.parameters)
    run.fitted_parameters = fitted_params
    run.current_log_loss = scores["current"].log_loss
    run.fitted_log_loss = scores["fitted"].log_loss
    run.defaults_log_loss = scores["defaults"].log_loss
    run.evaluation = verdict.as_dict()
    run.curve = {
        "stability_days": median_s,
        "current": forgetting_curve(current, median_s),
        "fitted": forgetting_curve(fitted, median_s),
    }
    run.adopted = verdict.adopt
    if run.adopted:
        LearnerSettings.objects.filter(pk=settings_obj.pk).update(parameters=fitted_params)
    _finish(run, status=OptimizationRun.Status.DONE, message=_explain(verdict))
    if run.adopted:
        reschedule_here(user=user, reason=Reschedule.Reason.OPTIMIZATION)


def _explain(verdict: Verdict) -> str:
    s = verdict.metrics
    losses = (
        f"Log loss on your {verdict.evaluated} most recent reviews: in use {s['current'].log_loss:.4f}, "
        f"defaults {s['defaults'].log_loss:.4f}, fitted {s['fitted'].log_loss:.4f}"
    )
    stale = (
        " The FSRS defaults predict them better than the parameters in use, by more than the noise: consider "
        "going back to the defaults."
        if verdict.defaults_over_current.significant
        else ""
    )
    if verdict.adopt:
        return f"{losses}; adopted: the fit predicts them better than both, by more than its own noise."
    if min(verdict.vs_current.mean_gain, verdict.vs_defaults.mean_gain) <= 0:
        return f"{losses}; kept the parameters in use: the fit does not predict them better than both.{stale}"
    return (
        f"{losses}; kept the parameters in use: the fit's gain (at least "
        f"{min(verdict.vs_current.mean_gain, verdict.vs_defaults.mean_gain):.4f} per review) is within its noise."
        + stale
    )
