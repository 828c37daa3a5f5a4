"""Workers announce themselves in Redis so /healthz can list them in milliseconds.

Each worker's main process refreshes a key with a short TTL; a worker that dies stops
refreshing and drops out of the list within WORKER_HEARTBEAT_TTL seconds.
"""

from __future__ import annotations

import json
import os
import threading
import time

from celery.signals import celeryd_after_setup, worker_ready, worker_shutdown
from django.conf import settings

from tutor.redis_client import get_redis
from workers.device import describe_device

KEY_PREFIX = "tilewise:worker:"

_state: dict[str, object] = {}
_stop = threading.Event()


def heartbeat_payload(hostname: str, queues: list[str], concurrency: int) -> dict[str, object]:
    return {
        "hostname": hostname,
        "queues": sorted(queues),
        "concurrency": concurrency,
        "device": describe_device(),
        "pid": os.getpid(),
        "started_at": time.time(),
    }


@celeryd_after_setup.connect
def _remember_worker(sender: str, instance, **kwargs) -> None:
    queues = list(instance.app.amqp.queues.consume_from.keys())
    _state["payload"] = heartbeat_payload(sender, queues, instance.concurrency)


@worker_ready.connect
def _start_heartbeat(**kwargs) -> None:
    payload = _state.get("payload")
    if not payload:
        return
    ttl = settings.WORKER_HEARTBEAT_TTL
    key = KEY_PREFIX + str(payload["hostname"])  # type: ignore[index]
    body = json.dumps(payload)

    def beat() -> None:
        while not _stop.is_set():
            try:
                get_redis().set(key, body, ex=ttl)
            except Exception:  # broker briefly down: try again next beat
                pass
            _stop.wait(ttl / 3)

    threading.Thread(target=beat, name="tilewise-heartbeat", daemon=True).start()


@worker_shutdown.connect
def _stop_heartbeat(**kwargs) -> None:
    _stop.set()
    payload = _state.get("payload")
    if payload:
        try:
            get_redis().delete(KEY_PREFIX + str(payload["hostname"]))  # type: ignore[index]
        except Exception:
            pass


def live_workers() -> list[dict[str, object]]:
    """Workers whose heartbeat has not expired, sorted by hostname."""
    client = get_redis()
    keys = sorted(client.scan_iter(match=KEY_PREFIX + "*", count=100))
    workers = []
    for raw in client.mget(keys) if keys else []:
        if raw:
            workers.append(json.loads(raw))
    return sorted(workers, key=lambda w: str(w["hostname"]))


def heartbeats_complete() -> bool:
    """Whether every live worker has announced itself since Redis started: false for the first
    WORKER_HEARTBEAT_TTL seconds after a restart, when live_workers() can miss workers that are alive."""
    return int(get_redis().info("server")["uptime_in_seconds"]) >= settings.WORKER_HEARTBEAT_TTL
