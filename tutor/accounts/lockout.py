"""Log-in lockout after repeated failures (django-axes), and what the learner sees then.

Axes counts failed log-ins in the database and applies one limit to every lockout parameter. We
want a different limit for each: few failures for one account from one address (someone guessing
a password), more for one account from anywhere, more still for one address across accounts (a
classroom shares one). `TieredLockoutHandler` keeps axes' counting and compares each count with
its own limit (settings.LOGIN_FAILURE_LIMITS, in the order of AXES_LOCKOUT_PARAMETERS).
"""

from __future__ import annotations

import math

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone


class TieredLockoutHandler(AxesDatabaseHandler):
    """Axes' database handler with one failure limit per lockout parameter."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        # Axes locks when this reaches AXES_FAILURE_LIMIT: scale each count to that limit, so that
        # it does exactly when some count reaches its own limit.
        base = settings.AXES_FAILURE_LIMIT
        scaled = [
            (attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0) * base // limit
            for attempts, limit in zip(
                self.get_user_attempts(request, credentials), settings.LOGIN_FAILURE_LIMITS, strict=True
            )
        ]
        return max(scaled, default=0)

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        # A successful log-in clears that account's failures from that address only: logging in to
        # one's own account must not wipe the failures counted against the address or other accounts.
        username = get_client_username(request, credentials)
        count, _ = AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address).delete()
        return count


def seconds_until_unlocked(request: HttpRequest, credentials: dict | None = None) -> int:
    """How long the log-in that was just refused stays refused: an upper bound, in whole seconds.

    Counts only look back AXES_COOLOFF_TIME, and a try during a lockout is not counted, so the
    lockout ends at the latest counted failure plus the cool-off.
    """
    from axes.handlers.proxy import AxesProxyHandler

    cool_off = get_cool_off(request)
    attempts = AxesProxyHandler.get_implementation().get_user_attempts(request, credentials)
    latest = [t for qs in attempts if (t := qs.aggregate(latest=Max("attempt_time"))["latest"]) is not None]
    if not latest:
        return math.ceil(cool_off.total_seconds())
    remaining = max(latest) + cool_off - timezone.now()
    return max(1, math.ceil(remaining.total_seconds()))


def wait_text(seconds: int) -> str:
    minutes = math.ceil(seconds / 60)
    return "1 minute" if minutes <= 1 else f"{minutes} minutes"


def lockout_response(request: HttpRequest, original_response=None, credentials: dict | None = None) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: JSON `{"detail"}` with 429 for the API, the lockout page for people.

    Axes calls this with (request, original_response, credentials) from sync code and with
    (request, credentials) from async code, so the credentials are read from the request.
    """
    credentials = getattr(request, "axes_credentials", None) or (credentials if isinstance(credentials, dict) else None)
    seconds = seconds_until_unlocked(request, credentials)
    detail = f"Too many failed log-in attempts. Try again in {wait_text(seconds)}."
    headers = {"Retry-After": str(seconds)}
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": detail}, status=429, headers=headers)
    response = render(
        request, "registration/locked_out.html", {"detail": detail, "wait": wait_text(seconds)}, status=429
    )
    response["Retry-After"] = str(seconds)
    return response
