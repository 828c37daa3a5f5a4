import uuid

import pytest

from quizzes.models import Card
from tutor.review.models import CardState, ReviewLog, StudySession

pytestmark = pytest.mark.django_db


def post(client, url, data):
    return client.post(url, data, content_type="application/json")


def submit(client, card, rating=3, **extra):
    return post(
        client, "/api/review/submit/", {"card": card.pk, "rating": rating, "idempotency_key": uuid.uuid4().hex, **extra}
    )


@pytest.fixture
def card(shipped_course):
    return Card.objects.filter(kind="basic").order_by("pk").first()


def test_queue_returns_progress_and_the_first_card_with_both_sides(learner_client, shipped_course):
    body = learner_client.get("/api/review/queue/").json()
    assert body["progress"]["new"] == 20 and body["done_for_today"] is False
    first = body["items"][0]
    assert "study-card" in first["front"] and "card-answer" in first["back"]
    assert set(first["intervals"]) == {"1", "2", "3", "4"}
    assert "front" not in body["items"][1]


def test_submit_then_resubmit_with_the_same_key(learner_client, card):
    data = {"card": card.pk, "rating": 3, "idempotency_key": "k-123"}
    first = post(learner_client, "/api/review/submit/", data)
    second = post(learner_client, "/api/review/submit/", data)
    assert first.status_code == 201 and second.status_code == 200
    assert second.json()["duplicate"] is True
    assert ReviewLog.objects.count() == 1


@pytest.mark.parametrize(
    "body,field",
    [
        ({"rating": 3, "idempotency_key": "a"}, "card"),
        ({"card": 1, "rating": 7, "idempotency_key": "a"}, "rating"),
        ({"card": 1, "rating": "good", "idempotency_key": "a"}, "rating"),
        ({"card": 1, "rating": 3}, "idempotency_key"),
        ({"card": 1, "rating": 3, "idempotency_key": "a", "reviewed_at": "yesterday-ish"}, "reviewed_at"),
    ],
)
def test_malformed_submissions_are_400_naming_the_field(learner_client, card, body, field):
    response = post(learner_client, "/api/review/submit/", body)
    assert response.status_code == 400
    error = response.json()
    assert error["field"] == field and error["detail"] and field in error["errors"]
    assert ReviewLog.objects.count() == 0


def test_body_that_is_not_json_is_a_400(learner_client, card):
    response = learner_client.post("/api/review/submit/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert ReviewLog.objects.count() == 0


def test_unknown_card_is_404_and_stale_tab_is_409(learner_client, card):
    assert (
        post(learner_client, "/api/review/submit/", {"card": 999999, "rating": 3, "idempotency_key": "x"}).status_code
        == 404
    )
    assert submit(learner_client, card, expected_version=0).status_code == 201
    conflict = submit(learner_client, card, expected_version=0)
    assert conflict.status_code == 409 and "another tab" in conflict.json()["detail"]


def test_future_review_time_is_refused(learner_client, card):
    response = submit(learner_client, card, reviewed_at="2099-01-01T00:00:00Z")
    assert response.status_code == 400 and response.json()["field"] == "reviewed_at"


def test_undo_endpoint(learner_client, card):
    submit(learner_client, card)
    response = post(learner_client, "/api/review/undo/", {})
    assert response.status_code == 200 and response.json()["undone_at"]
    assert post(learner_client, "/api/review/undo/", {}).status_code == 404


def test_resending_the_key_of_an_undone_review_returns_it_undone_and_records_nothing(learner_client, card):
    data = {"card": card.pk, "rating": 3, "idempotency_key": "k-undone"}
    assert post(learner_client, "/api/review/submit/", data).status_code == 201
    assert post(learner_client, "/api/review/undo/", {}).status_code == 200
    again = post(learner_client, "/api/review/submit/", data)
    assert again.status_code == 200, again.content
    body = again.json()
    assert body["duplicate"] is True and body["review"]["undone_at"] and body["state"] is None
    assert ReviewLog.objects.count() == 1 and not CardState.objects.exists()


def test_the_key_of_an_undone_review_answers_with_the_cards_state_as_it_is_now(learner_client, card):
    post(learner_client, "/api/review/submit/", {"card": card.pk, "rating": 1, "idempotency_key": "first"})
    second = {"card": card.pk, "rating": 3, "idempotency_key": "second"}
    post(learner_client, "/api/review/submit/", second)
    post(learner_client, "/api/review/undo/", {})
    body = post(learner_client, "/api/review/submit/", second).json()
    assert body["review"]["undone_at"] and body["state"]["reps"] == 1


def test_settings_validate_and_rebuild(learner_client, card):
    assert learner_client.get("/api/review/settings/").json()["desired_retention"] == 0.9
    bad = learner_client.patch(
        "/api/review/settings/", {"desired_retention": 1.5, "timezone": "Mars/Base"}, content_type="application/json"
    )
    assert bad.status_code == 400 and {"desired_retention", "timezone"} <= set(bad.json()["errors"])
    assert bad.json()["field"] in {"desired_retention", "timezone"} and bad.json()["detail"]
    ok = learner_client.patch(
        "/api/review/settings/", {"desired_retention": 0.85, "new_cards_per_day": 5}, content_type="application/json"
    )
    assert ok.status_code == 200
    assert learner_client.get("/api/review/queue/").json()["progress"]["new"] == 5


def test_stats_say_how_each_figure_is_measured(learner_client, card):
    submit(learner_client, card)
    body = learner_client.get("/api/review/stats/").json()
    assert len(body["heatmap"]) == 365 and body["heatmap"][-1]["count"] == 1
    assert len(body["forecast"]) == 30 and body["streak_days"] == 1
    assert set(body["methods"]) >= {"heatmap", "retention", "forecast", "mastery", "streak"}
    assert body["mastery"]["topics"] and body["mastery"]["lessons"]


def test_optimization_with_too_few_reviews_says_why(learner_client, card):
    submit(learner_client, card)
    response = post(learner_client, "/api/review/optimization/", {})
    assert response.status_code == 202
    assert response.json()["status"] == "failed" and "at least 200 reviews" in response.json()["message"]


def test_a_learner_never_sees_another_learners_data(client, learner, other_learner, card):
    client.force_login(other_learner)
    submit(client, card)
    theirs_log = ReviewLog.objects.get(user=other_learner)
    theirs_state = CardState.objects.get(user=other_learner)
    theirs_session = StudySession.objects.get(user=other_learner)
    client.force_login(learner)
    assert client.get(f"/api/review/logs/{theirs_log.pk}/").status_code == 404
    assert client.get(f"/api/review/states/{theirs_state.pk}/").status_code == 404
    assert client.get(f"/api/sessions/{theirs_session.pk}/").status_code == 404
    assert client.get("/api/review/logs/").json()["count"] == 0
    assert client.get("/api/review/states/").json()["count"] == 0
    assert client.get("/api/sessions/").json()["count"] == 0
    assert client.get("/api/review/stats/").json()["total_reviews"] == 0
    assert post(client, "/api/review/undo/", {}).status_code == 404  # cannot undo theirs
    assert ReviewLog.objects.get(pk=theirs_log.pk).undone_at is None
    assert client.get(f"/sessions/{theirs_session.pk}/").status_code == 404


def test_review_endpoints_need_a_login(client):
    for url in ("/api/review/queue/", "/api/review/stats/", "/api/review/settings/", "/api/sessions/"):
        assert client.get(url).status_code == 403, url


def test_schema_lists_the_review_endpoints(learner_client):
    schema = learner_client.get("/api/schema/").content.decode()
    for path in (
        "/api/review/queue/",
        "/api/review/submit/",
        "/api/review/undo/",
        "/api/review/stats/",
        "/api/review/settings/",
    ):
        assert path in schema
