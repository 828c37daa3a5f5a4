"""Every time a service is given is normalised to UTC, whatever zone or offset it came in."""

import uuid
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone as django_timezone

from quizzes.models import Card
from tutor.errors import DomainError
from tutor.review.models import ReviewLog
from tutor.review.queue import today_queue, tomorrow_forecast
from tutor.review.services import submit_review
from tutor.review.stats import learner_stats

pytestmark = pytest.mark.django_db


@pytest.fixture
def card(shipped_course):
    return Card.objects.filter(kind="basic").order_by("pk").first()


def _past(hours: float) -> datetime:
    return django_timezone.now() - timedelta(hours=hours)


@pytest.mark.parametrize(
    "written",
    [
        lambda t: t.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        lambda t: t.astimezone(timezone(timedelta(hours=2))).isoformat(),
        lambda t: t.astimezone(ZoneInfo("America/New_York")).isoformat(),
    ],
    ids=["Z", "+02:00", "-05:00"],
)
def test_a_past_review_time_through_the_api_is_stored_as_that_instant(learner_client, learner, card, written):
    moment = _past(30).replace(microsecond=0)
    response = learner_client.post(
        "/api/review/submit/",
        {"card": card.pk, "rating": 3, "idempotency_key": uuid.uuid4().hex, "reviewed_at": written(moment)},
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    assert ReviewLog.objects.get(user=learner).reviewed_at == moment


@pytest.mark.parametrize("zone", [ZoneInfo("UTC"), ZoneInfo("Europe/Berlin"), timezone(timedelta(hours=2))])
def test_the_services_take_any_aware_time(learner, card, zone):
    moment = _past(30).astimezone(zone)
    outcome = submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key="k", reviewed_at=moment)
    assert outcome.review.reviewed_at == moment and outcome.state.last_review.tzinfo is not None
    later = _past(1).astimezone(zone)
    queue = today_queue(learner, now=later)
    assert queue.items and set(queue.items[0].intervals) == {1, 2, 3, 4}
    assert tomorrow_forecast(learner, now=later) >= 0
    assert learner_stats(learner, now=later)["streak_days"] >= 0


def test_a_time_without_a_zone_is_refused_naming_the_field(learner, card):
    with pytest.raises(DomainError) as info:
        submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key="k", reviewed_at=datetime(2026, 1, 1))
    assert info.value.field == "reviewed_at" and info.value.status == 400
    with pytest.raises(DomainError) as info:
        today_queue(learner, now=datetime(2026, 1, 1))
    assert info.value.field == "now"
