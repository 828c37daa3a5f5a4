"""One place that builds Redis clients from REDIS_URL, with short timeouts so a dead broker
makes callers fail fast instead of hanging a request."""

from functools import lru_cache

import redis
from django.conf import settings


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2)


def get_redis() -> redis.Redis:
    return _client(settings.REDIS_URL)
