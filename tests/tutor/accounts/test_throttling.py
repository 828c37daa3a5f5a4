"""Failed log-ins lock out (django-axes), per account and address, per account, per address; sign-ups
are throttled per address; sign-up passwords go through the validators; logout ends the session."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db

RIGHT = "pw-ada-123456"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Dozens of log-ins per test: a fast hasher (set before the users are made) keeps them quick."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def fail_form(client, times, username="ada", **extra):
    for _ in range(times):
        client.post("/accounts/login/", {"username": username, "password": "wrong"}, **extra)


def test_the_fifth_wrong_password_on_the_form_shows_the_lockout_page_with_the_wait(client, learner):
    fail_form(client, 4)
    response = client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    html = response.content.decode()
    assert response.status_code == 429
    assert "Too many failed log-in attempts. Try again in 15 minutes." in html
    assert 14 * 60 < int(response["Retry-After"]) <= 15 * 60


def test_while_locked_out_even_the_right_password_is_refused_and_the_wait_does_not_grow(client, learner):
    fail_form(client, 5)
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=10))
    response = client.post("/accounts/login/", {"username": "ada", "password": RIGHT})
    assert response.status_code == 429
    assert "Try again in 5 minutes." in response.content.decode()
    assert client.get("/api/me/").status_code == 403


def test_the_lockout_ends_after_the_cool_off(client, learner):
    fail_form(client, 5)
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16))
    response = client.post("/accounts/login/", {"username": "ada", "password": RIGHT})
    assert response.status_code == 302
    assert client.get("/api/me/").json()["username"] == "ada"


def test_a_successful_log_in_clears_the_failures(client, learner):
    fail_form(client, 4)
    assert client.post("/accounts/login/", {"username": "ada", "password": RIGHT}).status_code == 302
    client.post("/accounts/logout/")
    fail_form(client, 4)
    assert client.post("/accounts/login/", {"username": "ada", "password": RIGHT}).status_code == 302


def test_a_lockout_is_per_address_for_one_account(learner):
    fail_form(Client(REMOTE_ADDR="10.0.0.1"), 5)
    other_place = Client(REMOTE_ADDR="10.0.0.2")
    assert other_place.post("/accounts/login/", {"username": "ada", "password": RIGHT}).status_code == 302


def test_one_account_is_locked_after_20_failures_from_many_addresses(learner):
    for i in range(20):
        fail_form(Client(REMOTE_ADDR=f"10.0.1.{i}"), 1)
    response = Client(REMOTE_ADDR="10.0.2.1").post("/accounts/login/", {"username": "ada", "password": RIGHT})
    assert response.status_code == 429


def test_one_address_is_locked_after_50_failures_across_accounts(learner):
    crowd = Client(REMOTE_ADDR="10.0.3.1")
    for i in range(50):
        fail_form(crowd, 1, username=f"guess{i}")
    assert crowd.post("/accounts/login/", {"username": "ada", "password": RIGHT}).status_code == 429
    assert (
        Client(REMOTE_ADDR="10.0.3.2").post("/accounts/login/", {"username": "ada", "password": RIGHT}).status_code
        == 302
    )


def test_logging_in_to_ones_own_account_does_not_clear_failures_against_others(learner, other_learner):
    client = Client(REMOTE_ADDR="10.0.4.1")
    fail_form(client, 4, username="grace")
    assert client.post("/accounts/login/", {"username": "ada", "password": RIGHT}).status_code == 302
    client.post("/accounts/logout/")
    response = client.post("/accounts/login/", {"username": "grace", "password": "wrong"})
    assert response.status_code == 429


def test_the_token_endpoint_answers_429_json_with_the_wait(client, learner):
    for _ in range(4):
        response = client.post("/api/auth/token/", {"username": "ada", "password": "wrong"})
        assert response.status_code == 401 and "detail" in response.json()
    response = client.post(
        "/api/auth/token/", {"username": "ada", "password": "wrong"}, content_type="application/json"
    )
    assert response.status_code == 429
    assert response.json() == {"detail": "Too many failed log-in attempts. Try again in 15 minutes."}
    assert int(response["Retry-After"]) > 14 * 60
    assert client.post("/api/auth/token/", {"username": "ada", "password": RIGHT}).status_code == 429


def test_form_and_token_failures_count_together(client, learner):
    fail_form(client, 3)
    client.post("/api/auth/token/", {"username": "ada", "password": "wrong"})
    assert client.post("/api/auth/token/", {"username": "ada", "password": "wrong"}).status_code == 429
    assert client.post("/accounts/login/", {"username": "ada", "password": RIGHT}).status_code == 429


def test_the_admin_log_in_is_locked_out_too(client, staff):
    for _ in range(5):
        response = client.post("/admin/login/", {"username": "editor", "password": "wrong"})
    assert response.status_code == 429


def test_many_force_logins_and_right_passwords_never_lock_anyone_out(client, learner):
    for _ in range(30):
        client.force_login(learner)
        assert client.post("/accounts/login/", {"username": "ada", "password": RIGHT}).status_code == 302
    assert not AccessAttempt.objects.exists()


def signup(client, username, password="a-long-pass-phrase-42"):
    return client.post("/accounts/signup/", {"username": username, "password1": password, "password2": password})


@override_settings(SIGNUPS_PER_HOUR=3)
def test_sign_ups_are_throttled_per_address_with_the_wait_shown():
    for i in range(3):
        assert signup(Client(REMOTE_ADDR="10.0.5.1"), f"new{i}").status_code == 302
    response = signup(Client(REMOTE_ADDR="10.0.5.1"), "new3")
    assert response.status_code == 429
    assert "Too many sign-ups from your address. Try again in 60 minutes." in response.content.decode()
    assert int(response["Retry-After"]) > 59 * 60
    assert not get_user_model().objects.filter(username="new3").exists()
    assert signup(Client(REMOTE_ADDR="10.0.5.2"), "new3").status_code == 302


@pytest.mark.parametrize(
    "password, message",
    [
        ("short1!", "too short"),
        ("password123", "too common"),
        ("83920174650", "entirely numeric"),
        ("newbie1234", "too similar to the username"),
    ],
)
def test_sign_up_passwords_go_through_the_validators(client, password, message):
    response = signup(client, "newbie", password)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_logout_ends_the_session_on_the_server(client, learner):
    client.post("/accounts/login/", {"username": "ada", "password": RIGHT})
    stolen = client.cookies["sessionid"].value
    assert Session.objects.filter(session_key=stolen).exists()
    client.post("/accounts/logout/")
    assert not Session.objects.filter(session_key=stolen).exists()
    replay = Client()
    replay.cookies["sessionid"] = stolen
    assert replay.get("/api/me/").status_code == 403


@pytest.mark.django_db(transaction=True)
async def test_the_lockout_page_is_served_under_asgi_too(async_client, learner):
    # Under uvicorn the middleware runs its async path, which calls the lockout page differently.
    for _ in range(4):
        await async_client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    response = await async_client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert response.status_code == 429
    assert "Try again in 15 minutes." in response.content.decode()
    response = await async_client.post("/api/auth/token/", {"username": "ada", "password": RIGHT})
    assert response.status_code == 429 and response.json()["detail"].startswith("Too many failed log-in attempts")


def test_migrate_makes_the_table_the_sign_up_count_lives_in(tmp_path):
    import os
    import sqlite3
    import subprocess
    import sys

    from tests.conftest import REPO

    env = {**os.environ, "TILEWISE_VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    tables = {row[0] for row in sqlite3.connect(tmp_path / "db.sqlite3").execute("SELECT name FROM sqlite_master")}
    assert "tilewise_throttle" in tables
