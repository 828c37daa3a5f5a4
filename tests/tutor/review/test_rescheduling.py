"""After a settings change the cards are re-scheduled on a worker, in batches; reviews keep working."""

import threading
import time
import uuid

import pytest

from quizzes.models import Card
from tutor.review import rescheduling
from tutor.review.models import CardState, LearnerSettings, Reschedule
from tutor.review.rescheduling import active_reschedule, reset_to_default_parameters, run_reschedule
from tutor.review.services import state_differences, submit_review


def _review(learner, cards, rating=3):
    for card in cards:
        submit_review(user=learner, card_id=card.pk, rating=rating, idempotency_key=uuid.uuid4().hex)


@pytest.mark.django_db
def test_a_settings_change_answers_at_once_and_the_job_brings_every_card_in_line(
    learner_client, learner, shipped_course
):
    _review(learner, Card.objects.order_by("pk")[:30])
    before = dict(CardState.objects.filter(user=learner).values_list("pk", "version"))
    response = learner_client.patch(
        "/api/review/settings/", {"desired_retention": 0.8}, content_type="application/json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["desired_retention"] == 0.8
    assert body["rescheduling"]["status"] == "queued" and body["rescheduling"]["total"] == 30
    assert dict(CardState.objects.filter(user=learner).values_list("pk", "version")) == before  # not in the request
    job = run_reschedule(body["rescheduling"]["id"])
    assert job.status == Reschedule.Status.DONE and job.done == job.total == 30
    assert state_differences(learner) == [] and active_reschedule(learner) is None
    after = dict(CardState.objects.filter(user=learner).values_list("pk", "version"))
    assert all(after[pk] == version + 1 for pk, version in before.items())


@pytest.mark.django_db
def test_a_newer_change_supersedes_a_job_that_has_not_finished(learner, shipped_course):
    _review(learner, Card.objects.order_by("pk")[:5])
    first = rescheduling.update_learner_settings(user=learner, changes={"desired_retention": 0.8})
    second = rescheduling.update_learner_settings(user=learner, changes={"desired_retention": 0.95})
    assert run_reschedule(first.pk).status == Reschedule.Status.SUPERSEDED
    assert run_reschedule(second.pk).status == Reschedule.Status.DONE
    assert state_differences(learner) == []


@pytest.mark.django_db
def test_back_to_the_defaults_drops_fitted_parameters(learner_client, learner, shipped_course):
    _review(learner, Card.objects.order_by("pk")[:5])
    LearnerSettings.objects.filter(user=learner).update(parameters=[0.3] * 21)
    response = learner_client.post("/api/review/settings/reset-parameters/", content_type="application/json")
    assert response.status_code == 202 and response.json()["parameters"] is None
    run_reschedule(response.json()["rescheduling"]["id"])
    assert state_differences(learner) == []


@pytest.mark.django_db
def test_with_the_broker_down_the_cards_are_re_scheduled_in_the_request(
    learner, shipped_course, dead_task, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(rescheduling, "reschedule_cards_task", dead_task("tutor.reschedule_cards"))
    _review(learner, Card.objects.order_by("pk")[:5])
    with django_capture_on_commit_callbacks(execute=True):
        job = reset_to_default_parameters(user=learner)
    job.refresh_from_db()
    assert job.status == Reschedule.Status.DONE and state_differences(learner) == []


@pytest.mark.services
def test_reviews_during_a_worker_side_re_schedule_are_kept_and_the_result_equals_a_full_rebuild(
    learner, shipped_course, celery_worker_process
):
    cards = list(Card.objects.order_by("pk")[:120])
    _review(learner, cards)
    job = rescheduling.update_learner_settings(user=learner, changes={"desired_retention": 0.8})  # committed: sent

    def keep_reviewing():
        for card in cards[:40]:
            submit_review(user=learner, card_id=card.pk, rating=1, idempotency_key=uuid.uuid4().hex)

    reviewer = threading.Thread(target=keep_reviewing)
    reviewer.start()
    reviewer.join(60)
    deadline = time.monotonic() + 120
    while (job := Reschedule.objects.get(pk=job.pk)).status in Reschedule.ACTIVE and time.monotonic() < deadline:
        time.sleep(0.2)
    assert job.status == Reschedule.Status.DONE, job
    assert CardState.objects.filter(user=learner, lapses__gte=0).count() == 120
    assert state_differences(learner) == []
