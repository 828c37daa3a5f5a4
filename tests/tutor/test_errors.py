"""Every API error is JSON in one shape: {"detail", "field"?, "errors"?}, whoever answers it."""

import json

import pytest

from tutor.errors import validation_error_body

pytestmark = pytest.mark.django_db


def test_validation_errors_name_the_first_field_and_keep_every_message():
    errors = {"learning_steps": {0: ["Ensure this value is less than or equal to 1440."]}, "timezone": ["Unknown."]}
    body = validation_error_body(errors)
    assert body == {
        "detail": "Ensure this value is less than or equal to 1440.",
        "field": "learning_steps",
        "errors": errors,
    }


def test_errors_not_about_one_field_have_no_field():
    assert validation_error_body({"non_field_errors": ["Both or neither."]}) == {
        "detail": "Both or neither.",
        "errors": {"non_field_errors": ["Both or neither."]},
    }
    assert validation_error_body(["Something is off."])["detail"] == "Something is off."


@pytest.mark.parametrize(
    "path", ["/api/sessions/null,null/", "/api/review/logs/abc/", "/api/labs/runs/1.5/", "/api/nothing-here/"]
)
def test_malformed_ids_and_unknown_api_paths_are_a_json_404(learner_client, path):
    response = learner_client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json" and response.json()["detail"]


@pytest.mark.parametrize("path", ["/api/cards/?course=%00", "/api/courses/%00/", "/api/cards/?topic=a%00b"])
def test_a_nul_in_the_address_is_a_400_not_a_failed_lookup(learner_client, path):
    response = learner_client.get(path)
    assert response.status_code == 400 and "NUL" in response.json()["detail"]


def test_a_method_the_teacher_stream_does_not_take_is_a_json_405(learner_client):
    response = learner_client.get("/api/teacher/conversations/1/ask/")
    assert response.status_code == 405 and "GET" in response.json()["detail"]
    assert response["Allow"] == "POST"


def test_a_failed_csrf_check_on_the_teacher_stream_is_json(client, learner):
    client = type(client)(enforce_csrf_checks=True)
    client.force_login(learner)
    response = client.post("/api/teacher/conversations/1/ask/", {"question": "hi"}, content_type="application/json")
    assert response.status_code == 403 and response.json()["detail"]


def test_pages_outside_the_api_keep_their_html_errors(learner_client):
    response = learner_client.get("/no-such-page/")
    assert response.status_code == 404 and not response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize("text", ["\ud800", "a\x00b"])
def test_json_with_text_that_cannot_be_stored_is_a_400(learner_client, shipped_course, text):
    body = json.dumps({"card": 1, "rating": 3, "idempotency_key": text})  # \ud800 and \u0000 as JSON escapes
    response = learner_client.post("/api/review/submit/", body, content_type="application/json")
    assert response.status_code == 400 and "may not contain" in response.json()["detail"]


def test_the_api_takes_json_only(learner_client, shipped_course):
    response = learner_client.post("/api/review/submit/", {"card": 1, "rating": 3, "idempotency_key": "k"})
    assert response.status_code == 415 and response.json()["detail"]


def test_every_operation_documents_the_error_shape(learner_client):
    schema = learner_client.get("/api/schema/?format=json").json()
    assert schema["components"]["schemas"]["Error"]["required"] == ["detail"]
    submit = schema["paths"]["/api/review/submit/"]["post"]["responses"]
    session = schema["paths"]["/api/sessions/{id}/"]["get"]["responses"]
    assert {"400", "403", "404"} <= set(submit) and {"403", "404"} <= set(session)
    assert session["404"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    assert "401" in session  # an expired, replaced or revoked token
    assert "404" in schema["paths"]["/api/cards/"]["get"]["responses"]  # a page past the end of a list
