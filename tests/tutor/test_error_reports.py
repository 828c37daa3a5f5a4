"""The debug error page (DEBUG=true, the `make run` default) does not show secrets."""

import sys

import pytest
from django.test import RequestFactory, override_settings
from django.views.debug import technical_500_response

SECRETS = {
    "REDIS_URL": "redis://:broker-pw-1234@redis.internal:6379/0",
    "CELERY_BROKER_URL": "redis://:broker-pw-1234@redis.internal:6379/0",
    "CELERY_RESULT_BACKEND": "redis://:broker-pw-1234@redis.internal:6379/0",
    "LLM_BASE_URL": "http://llm.internal:8000/v1",
    "LLM_API_KEY": "sk-llm-key-5678",
}
DATABASE_URL = "postgres://tilewise:db-pw-9876@db.internal:5432/tilewise"


def error_page(request) -> str:
    def failing_view(request):
        broker = SECRETS["REDIS_URL"]  # a local variable holding a secret, as in a client library's frame
        raise ConnectionError(f"Error connecting to {broker} with key {SECRETS['LLM_API_KEY']}")

    try:
        failing_view(request)
    except ConnectionError:
        return technical_500_response(request, *sys.exc_info()).content.decode()


@pytest.mark.parametrize("plain_text", [False, True], ids=["html", "text"])
@override_settings(DEBUG=True, **SECRETS)
def test_the_debug_page_hides_broker_database_and_llm_secrets(monkeypatch, plain_text):
    monkeypatch.setenv("DATABASE_URL", DATABASE_URL)
    headers = {} if not plain_text else {"HTTP_ACCEPT": "text/plain"}
    # Under runserver the process environment reaches request.META; put it there the same way.
    request = RequestFactory().post(
        "/api/x/",
        {"password": "hunter2-login-pw"},
        DATABASE_URL=DATABASE_URL,
        REDIS_URL=SECRETS["REDIS_URL"],
        **headers,
    )
    page = error_page(request)
    assert "ConnectionError" in page  # still a useful page
    for secret in ("broker-pw-1234", "redis.internal", "llm.internal", "sk-llm-key-5678", "db-pw-9876", "db.internal"):
        assert secret not in page, secret
    assert "hunter2-login-pw" not in page
    assert "********************" in page


@override_settings(DEBUG=True)
def test_the_secret_key_stays_hidden(settings):
    page = error_page(RequestFactory().get("/"))
    assert settings.SECRET_KEY not in page
