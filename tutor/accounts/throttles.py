"""Sign-ups per client address: DRF's rate throttle, counted in the database cache so that every
web process shares the count and sign-up does not depend on the broker."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import caches
from rest_framework.throttling import SimpleRateThrottle


class SignupThrottle(SimpleRateThrottle):
    """settings.SIGNUPS_PER_HOUR sign-up attempts per hour from one address (REMOTE_ADDR: the
    server in front of Django must pass the client's address, as uvicorn's --proxy-headers does)."""

    scope = "signup"

    def __init__(self):
        self.cache = caches["throttle"]
        self.rate = f"{settings.SIGNUPS_PER_HOUR}/hour"
        self.num_requests, self.duration = self.parse_rate(self.rate)

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": request.META.get("REMOTE_ADDR", "")}
