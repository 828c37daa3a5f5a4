"""What the debug error page (DEBUG=true) and error reports may show.

Django hides settings whose names look secret (KEY, TOKEN, PASS, ...) but shows REDIS_URL,
CELERY_BROKER_URL and LLM_BASE_URL, which name hosts and may carry passwords. The filter hides
those by name, and POST fields named like secrets (a password) even where a view forgot to mark
them; the reporter then blanks any configured secret wherever else it turns up on the page (an
exception message, a local variable, the process environment under runserver).
"""

from __future__ import annotations

import html
import os
import re

from django.conf import settings
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter

# The variables whose values are secrets, read from the environment and from settings.
_SECRET_ENV = ("DATABASE_URL", "REDIS_URL", "LLM_BASE_URL", "LLM_API_KEY", "SECRET_KEY")
_SECRET_SETTINGS = (
    "SECRET_KEY",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "LLM_BASE_URL",
    "LLM_API_KEY",
)
# Shorter values are left: blanking them would garble the page, not protect anything.
_MIN_SECRET_LENGTH = 8
_NOT_SECRET = {"not-needed"}  # LLM_API_KEY's default


class SecretHidingFilter(SafeExceptionReporterFilter):
    """Django's filter, also hiding URL-ish settings and request.META entries (hosts, credentials)."""

    hidden_settings = re.compile(
        "API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|URL|DATABASE|BROKER|BACKEND|DSN", flags=re.I
    )

    def is_active(self, request) -> bool:
        # Also with DEBUG on: sensitive_post_parameters (passwords) stay hidden on the debug page.
        return True

    def get_post_parameters(self, request):
        """Django hides the POST fields a view marks sensitive; also hide any named like a secret."""
        params = super().get_post_parameters(request)
        secret = [key for key in params if self.hidden_settings.search(key)]
        if not secret:
            return params
        params = params.copy()
        for key in secret:
            params[key] = self.cleansed_substitute
        return params


class SecretHidingReporter(ExceptionReporter):
    """Django's reporter, with every configured secret value blanked out of the page and the text."""

    def get_traceback_html(self) -> str:
        return _blank_secrets(super().get_traceback_html())

    def get_traceback_text(self) -> str:
        return _blank_secrets(super().get_traceback_text())


def _secret_values() -> set[str]:
    values = {os.environ.get(name, "") for name in _SECRET_ENV}
    values |= {str(getattr(settings, name, "") or "") for name in _SECRET_SETTINGS}
    values |= {str(database.get("PASSWORD") or "") for database in settings.DATABASES.values()}
    return {v for v in values if len(v) >= _MIN_SECRET_LENGTH and v not in _NOT_SECRET}


def _blank_secrets(text: str) -> str:
    for value in sorted(_secret_values(), key=len, reverse=True):
        for form in {value, html.escape(value)}:
            text = text.replace(form, SecretHidingFilter.cleansed_substitute)
    return text
