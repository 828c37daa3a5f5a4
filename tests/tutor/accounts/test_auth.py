import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db


def test_signup_creates_the_account_and_logs_in(client):
    response = client.post(
        "/accounts/signup/",
        {"username": "newbie", "password1": "a-long-pass-phrase-42", "password2": "a-long-pass-phrase-42"},
    )
    assert response.status_code == 302
    assert get_user_model().objects.filter(username="newbie").exists()
    assert client.get("/api/me/").json()["username"] == "newbie"


def test_signup_with_mismatched_passwords_shows_the_error_and_creates_nothing(client):
    response = client.post(
        "/accounts/signup/",
        {"username": "newbie", "password1": "a-long-pass-phrase-42", "password2": "other-pass-phrase-42"},
    )
    assert response.status_code == 200
    assert "didn’t match" in response.content.decode()
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_login_and_logout(client, learner):
    response = client.post("/accounts/login/", {"username": "ada", "password": "pw-ada-123456"})
    assert response.status_code == 302
    assert client.get("/api/me/").status_code == 200
    client.post("/accounts/logout/")
    assert client.get("/api/me/").status_code == 403


def test_wrong_password_is_refused(client, learner):
    response = client.post("/accounts/login/", {"username": "ada", "password": "nope"})
    assert response.status_code == 200
    assert client.get("/api/me/").status_code == 403


def test_csrf_is_enforced_on_forms(learner):
    csrf_client = Client(enforce_csrf_checks=True)
    response = csrf_client.post("/accounts/login/", {"username": "ada", "password": "pw-ada-123456"})
    assert response.status_code == 403


def test_api_accepts_a_token(client, learner):
    token = Token.objects.create(user=learner)
    response = client.get("/api/me/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.json() == {"id": learner.id, "username": "ada", "is_staff": False}


def test_api_token_login_with_username_and_password(client, learner):
    response = client.post("/api/auth/token/", {"username": "ada", "password": "pw-ada-123456"})
    assert response.status_code == 200 and len(response.json()["token"]) == 40


def test_api_refuses_anonymous_requests(client):
    assert client.get("/api/me/").status_code == 403


def test_openapi_schema_and_docs_are_served(learner_client):
    schema = learner_client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"openapi: 3" in schema.content and b"/api/me/" in schema.content
    docs = learner_client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger" in docs.content.lower()
