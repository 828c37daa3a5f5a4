"""Re-deriving a learner's card states from the review log after their scheduling settings change.

A settings change or an adopted fit changes every card's schedule. Rebuilding them all in the request,
in one write transaction, held SQLite's write lock for seconds on a long history. Instead a Reschedule
job runs on a worker in batches of BATCH cards, each batch its own short transaction, so reviews keep
working meanwhile. Each card is rebuilt under its state's row lock from the log as it is then, so a
review that lands during the job is replayed too: when the job finishes, the states equal a full rebuild
(`manage.py rebuild_card_states --check`). A newer change supersedes a running job at its next batch.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from tutor.review.models import LearnerSettings, Reschedule
from tutor.review.services import card_keys, learner_settings, rebuild_card_state
from tutor.review.tasks import reschedule_cards as reschedule_cards_task
from workers.queues import DEFAULT, send_on_commit

BATCH = 200


def request_reschedule(*, user, reason: str) -> Reschedule:
    """Queue a batched rebuild on a worker; with the broker down, rebuild here and now (nothing is lost)."""
    job = Reschedule.objects.create(user=user, reason=reason, total=len(card_keys(user)))
    send_on_commit(
        reschedule_cards_task, args=[job.pk], queue=DEFAULT, on_broker_down=lambda reason: run_reschedule(job.pk)
    )
    return job


def reschedule_here(*, user, reason: str) -> Reschedule:
    """The same job, run in this process (a worker that just adopted a fit is already where it belongs)."""
    job = Reschedule.objects.create(user=user, reason=reason, total=len(card_keys(user)))
    return run_reschedule(job.pk)


def run_reschedule(job_id: int) -> Reschedule:
    job = Reschedule.objects.select_related("user").get(pk=job_id)
    if job.status not in Reschedule.ACTIVE:
        return job
    user = job.user
    keys = card_keys(user)
    Reschedule.objects.filter(pk=job.pk).update(status=Reschedule.Status.RUNNING, total=len(keys), done=0)
    for start in range(0, len(keys), BATCH):
        if Reschedule.objects.filter(user=user, pk__gt=job.pk).exists():
            return _end(job, Reschedule.Status.SUPERSEDED)
        with transaction.atomic():
            settings_obj = learner_settings(user)
            for card_id, reverse in keys[start : start + BATCH]:
                rebuild_card_state(user=user, card_id=card_id, reverse=reverse, settings_obj=settings_obj)
        Reschedule.objects.filter(pk=job.pk).update(done=min(len(keys), start + BATCH))
    return _end(job, Reschedule.Status.DONE)


def _end(job: Reschedule, status: str) -> Reschedule:
    Reschedule.objects.filter(pk=job.pk).update(status=status, finished_at=timezone.now())
    job.refresh_from_db()
    return job


def update_learner_settings(*, user, changes: dict) -> Reschedule:
    """Change a learner's scheduling settings; their cards are re-scheduled with them in the background."""
    with transaction.atomic():
        settings_obj = learner_settings(user)
        for name, value in changes.items():
            setattr(settings_obj, name, value)
        settings_obj.save()
        return request_reschedule(user=user, reason=Reschedule.Reason.SETTINGS)


def reset_to_default_parameters(*, user) -> Reschedule:
    """Drop fitted parameters: the FSRS defaults schedule this learner again (one click on the settings page)."""
    with transaction.atomic():
        LearnerSettings.objects.filter(pk=learner_settings(user).pk).update(parameters=None)
        return request_reschedule(user=user, reason=Reschedule.Reason.DEFAULTS)


def active_reschedule(user) -> Reschedule | None:
    """The learner's newest unfinished job, for the page's "re-scheduling N cards" line."""
    return Reschedule.objects.filter(user=user, status__in=Reschedule.ACTIVE).first()
