"""`manage.py check --deploy` with production settings, and the HTTPS settings behind it."""

import json
import os
import re
import secrets
import subprocess
import sys

import pytest
from django.test import override_settings

from tests.conftest import REPO

# Variables of the developer's or CI's environment that would change what is checked.
_OURS = ("DEBUG", "SECRET_KEY", "HTTPS", "TRUST_PROXY_SSL_HEADER", "HSTS_SECONDS", "SECURE_COOKIES", "ALLOWED_HOSTS")
PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "HTTPS": "true",
    "ALLOWED_HOSTS": "tilewise.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://tilewise.example.org",
}


def run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in _OURS}
    full_env.update(env)
    return subprocess.run(args, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=180)


def deploy_check(**env: str) -> tuple[int, list[str]]:
    result = run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], **env)
    # drf-spectacular's schema notes (W001) are about the API's documentation, not the deployment.
    issues = [i for i in re.findall(r"\(([\w.]+\.[WE]\d+)\)", result.stderr) if i != "drf_spectacular.W001"]
    return result.returncode, issues


def test_check_deploy_is_clean_with_production_settings():
    assert deploy_check(**PRODUCTION)[1] == []


def test_check_deploy_is_clean_behind_a_tls_proxy_too():
    assert deploy_check(**PRODUCTION, TRUST_PROXY_SSL_HEADER="true")[1] == []


def test_check_deploy_warns_when_https_is_not_declared():
    _, issues = deploy_check(**{**PRODUCTION, "HTTPS": "false"})
    assert {"security.W004", "security.W008"} <= set(issues)


def settings_under(**env: str) -> dict:
    code = (
        "from tutor.startup import load_settings_or_exit; load_settings_or_exit()\n"
        "import json; from django.conf import settings as s\n"
        "print(json.dumps({k: getattr(s, k, None) for k in ('SECURE_SSL_REDIRECT', 'SECURE_HSTS_SECONDS',"
        " 'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_HSTS_PRELOAD', 'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE',"
        " 'SECURE_PROXY_SSL_HEADER')}))"
    )
    result = run([sys.executable, "-c", code], **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_https_turns_on_the_redirect_hsts_and_secure_cookies():
    s = settings_under(**PRODUCTION)
    assert s["SECURE_SSL_REDIRECT"] and s["SECURE_HSTS_SECONDS"] == 365 * 24 * 3600
    assert s["SECURE_HSTS_INCLUDE_SUBDOMAINS"] and s["SECURE_HSTS_PRELOAD"]
    assert s["SESSION_COOKIE_SECURE"] and s["CSRF_COOKIE_SECURE"]
    assert s["SECURE_PROXY_SSL_HEADER"] is None  # a client could forge the header unless a proxy sets it


def test_the_proxy_header_is_trusted_only_when_asked():
    s = settings_under(**PRODUCTION, TRUST_PROXY_SSL_HEADER="true")
    assert s["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]


def test_the_local_default_serves_plain_http():
    s = settings_under()
    assert not s["SECURE_SSL_REDIRECT"] and s["SECURE_HSTS_SECONDS"] == 0 and not s["SESSION_COOKIE_SECURE"]


@pytest.mark.django_db
@override_settings(SECURE_SSL_REDIRECT=True, SECURE_HSTS_SECONDS=3600)
def test_http_is_redirected_but_the_container_health_check_is_not(client):
    response = client.get("/learn/")
    assert response.status_code == 301 and response["Location"].startswith("https://")
    assert client.get("/healthz").status_code == 200
    assert "Strict-Transport-Security" in client.get("/learn/", secure=True)


def test_a_server_started_with_debug_on_says_so_in_one_line():
    result = run([sys.executable, "-c", "import tutor.asgi"], DEBUG="true")
    warnings = [line for line in result.stderr.splitlines() if "DEBUG is on" in line]
    assert result.returncode == 0 and len(warnings) == 1 and warnings[0].startswith("tilewise: warning:")
    result = run([sys.executable, "-c", "import tutor.asgi"], **PRODUCTION)
    assert result.returncode == 0 and "DEBUG is on" not in result.stderr
