"""API tokens expire, can be rotated and revoked; a refused token is a 401 with JSON."""

from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.utils import timezone
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db


def me(client, key):
    return client.get("/api/me/", HTTP_AUTHORIZATION=f"Token {key}")


def test_token_login_gives_a_token_and_when_it_expires(client, learner):
    body = client.post("/api/auth/token/", {"username": "ada", "password": "pw-ada-123456"}).json()
    created = timezone.datetime.fromisoformat(body["created"])
    assert timezone.datetime.fromisoformat(body["expires_at"]) - created == timedelta(days=30)
    assert me(client, body["token"]).json()["username"] == "ada"


def test_token_login_accepts_json_too(client, learner):
    response = client.post(
        "/api/auth/token/", {"username": "ada", "password": "pw-ada-123456"}, content_type="application/json"
    )
    assert response.status_code == 200 and len(response.json()["token"]) == 40


def test_a_wrong_password_is_a_401_with_detail_and_a_missing_field_a_400(client, learner):
    response = client.post("/api/auth/token/", {"username": "ada", "password": "nope"})
    assert response.status_code == 401
    assert response.json()["detail"] == "Unable to log in with this username and password."
    missing = client.post("/api/auth/token/", {"username": "ada"})
    assert missing.status_code == 400 and missing.json()["field"] == "password"


def test_logging_in_again_returns_the_same_token_until_it_expires(client, learner):
    first = client.post("/api/auth/token/", {"username": "ada", "password": "pw-ada-123456"}).json()["token"]
    second = client.post("/api/auth/token/", {"username": "ada", "password": "pw-ada-123456"}).json()["token"]
    assert first == second
    Token.objects.filter(key=first).update(created=timezone.now() - timedelta(days=31))
    third = client.post("/api/auth/token/", {"username": "ada", "password": "pw-ada-123456"}).json()["token"]
    assert third != first and me(client, third).status_code == 200


def test_an_expired_token_is_refused_with_401_json(client, learner):
    token = Token.objects.create(user=learner)
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(days=30, seconds=1))
    response = me(client, token.key)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["detail"].startswith("Token expired.")


@override_settings(API_TOKEN_TTL_DAYS=2)
def test_the_lifetime_is_the_api_token_ttl_setting(client, learner):
    token = Token.objects.create(user=learner)
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(days=1, hours=23))
    assert me(client, token.key).status_code == 200
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(days=2))
    assert me(client, token.key).status_code == 401


def test_rotating_makes_a_new_token_and_the_old_one_stops_working(client, learner):
    old = Token.objects.create(user=learner)
    response = client.post("/api/me/token/", HTTP_AUTHORIZATION=f"Token {old.key}")
    assert response.status_code == 201
    new = response.json()["token"]
    assert new != old.key
    assert me(client, new).status_code == 200
    refused = me(client, old.key)
    assert refused.status_code == 401 and "revoked or replaced" in refused.json()["detail"]


def test_rotating_from_the_browser_session_needs_the_csrf_token(learner):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(learner)
    assert browser.post("/api/me/token/").status_code == 403
    assert not Token.objects.filter(user=learner).exists()


def test_revoking_deletes_the_token(learner_client, learner):
    token = Token.objects.create(user=learner)
    assert learner_client.delete("/api/me/token/").status_code == 204
    assert me(Client(), token.key).status_code == 401
    assert learner_client.delete("/api/me/token/").status_code == 204  # nothing left to revoke: still done


def test_token_info_says_whether_there_is_one_and_when_it_expires_without_the_key(learner_client, learner):
    assert learner_client.get("/api/me/token/").json() == {
        "exists": False,
        "created": None,
        "expires_at": None,
        "expired": False,
    }
    token = Token.objects.create(user=learner)
    body = learner_client.get("/api/me/token/").json()
    assert body["exists"] is True and body["expired"] is False and body["expires_at"]
    assert token.key not in str(body)


def test_an_unknown_or_malformed_token_is_a_401(client, learner):
    assert me(client, "0" * 40).status_code == 401
    assert client.get("/api/me/", HTTP_AUTHORIZATION="Token").status_code == 401


def test_no_credentials_at_all_stays_a_403(client):
    assert client.get("/api/me/").status_code == 403
    assert client.post("/api/me/token/").status_code == 403


def test_a_deactivated_learners_token_is_refused(client, learner):
    token = Token.objects.create(user=learner)
    learner.is_active = False
    learner.save()
    assert me(client, token.key).status_code == 401
