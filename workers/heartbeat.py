"""Workers announce themselves in Redis so /healthz can list them in milliseconds.

Each worker's main process refreshes a key with a short TTL; a worker that dies stops
refreshing and drops out of the list within WORKER_HEARTBEAT_TTL seconds.

A worker on the "gpu" queue also subscribes, at start-up, to its device kind's queue
("gpu.h100"), decided by `describe_device()`. Each beat says what the worker is doing: "warming"
(its compile caches fill, see labs.tasks.warm_up), "busy" with a task (name, arguments, since when:
written by the process that runs it, which under the prefork pool is a child) or "idle".
"""

from __future__ import annotations

import json
import os
import threading
import time

from celery.signals import celeryd_after_setup, task_postrun, task_prerun, worker_ready, worker_shutdown
from django.conf import settings

from tutor.redis_client import get_redis
from workers.device import describe_device
from workers.queues import GPU, gpu_queue

KEY_PREFIX = "tilewise:worker:"
TASK_PREFIX = "tilewise:worker-task:"  # what a worker is running now
WARMING_PREFIX = "tilewise:worker-warming:"  # set while its warm-up is queued or running
WARMING_TTL = 30 * 60  # a warm-up that never reports back stops counting after this

_state: dict[str, object] = {}
_stop = threading.Event()


def heartbeat_payload(
    hostname: str, queues: list[str], concurrency: int, device: dict[str, object] | None = None
) -> dict[str, object]:
    return {
        "hostname": hostname,
        "queues": sorted(queues),
        "concurrency": concurrency,
        "device": device or describe_device(),
        "pid": os.getpid(),
        "started_at": time.time(),
    }


@celeryd_after_setup.connect
def _remember_worker(sender: str, instance, **kwargs) -> None:
    device = describe_device()
    consumed = instance.app.amqp.queues.consume_from
    if GPU in consumed:  # a lab worker: it also takes the runs asked for its kind of device
        instance.app.amqp.queues.select_add(gpu_queue(str(device["device_kind"])))
    queues = [q for q in consumed if not q.endswith(".dq2")]  # leave out Celery's per-worker queue
    _state["payload"] = heartbeat_payload(sender, queues, instance.concurrency, device)


def this_worker() -> dict[str, object] | None:
    """In a worker's main process: its hostname, queues and device (None elsewhere)."""
    return _state.get("payload")  # type: ignore[return-value]


def worker_status(client, hostname: str) -> dict[str, object]:
    """{"state": "warming" | "busy" | "idle", "current": the task it runs, or None}."""
    warming, current = client.mget([WARMING_PREFIX + hostname, TASK_PREFIX + hostname])
    task = json.loads(current) if current else None
    state = "warming" if warming else "busy" if task else "idle"
    return {"state": state, "current": task}


def set_warming(hostname: str, warming: bool) -> None:
    """Mark the worker as warming up (its runs queue behind the warm-up) or done warming."""
    if warming:
        get_redis().set(WARMING_PREFIX + hostname, "1", ex=WARMING_TTL)
    else:
        get_redis().delete(WARMING_PREFIX + hostname)


@task_prerun.connect
def _record_task_start(task_id: str, task, args=None, **kwargs) -> None:
    hostname = task.request.hostname
    if not hostname:
        return
    body = {"task": task.name, "task_id": task_id, "args": list(args or [])[:3], "since": time.time()}
    try:
        ttl = settings.LAB_SOFT_TIME_LIMIT + 120
        get_redis().set(TASK_PREFIX + hostname, json.dumps(body, default=str), ex=ttl)
    except Exception:  # bookkeeping never fails a task
        pass


@task_postrun.connect
def _record_task_end(task_id: str, task, **kwargs) -> None:
    hostname = task.request.hostname
    if not hostname:
        return
    try:
        get_redis().delete(TASK_PREFIX + hostname)
    except Exception:
        pass


@worker_ready.connect
def _start_heartbeat(**kwargs) -> None:
    payload = _state.get("payload")
    if not payload:
        return
    ttl = settings.WORKER_HEARTBEAT_TTL
    hostname = str(payload["hostname"])  # type: ignore[index]
    key = KEY_PREFIX + hostname

    def beat() -> None:
        while not _stop.is_set():
            try:
                client = get_redis()
                body = json.dumps({**payload, **worker_status(client, hostname), "beat_at": time.time()})
                client.set(key, body, ex=ttl)
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
            hostname = str(payload["hostname"])  # type: ignore[index]
            get_redis().delete(KEY_PREFIX + hostname, TASK_PREFIX + hostname, WARMING_PREFIX + hostname)
        except Exception:
            pass


def live_workers() -> list[dict[str, object]]:
    """Workers whose heartbeat has not expired, sorted by hostname, each with what it does right now."""
    client = get_redis()
    keys = sorted(client.scan_iter(match=KEY_PREFIX + "*", count=100))
    workers = []
    for raw in client.mget(keys) if keys else []:
        if raw:
            worker = json.loads(raw)
            worker.update(worker_status(client, str(worker["hostname"])))
            worker["device"].setdefault("device_kind", worker["device"].get("kind"))  # a worker from before kinds
            workers.append(worker)
    return sorted(workers, key=lambda w: str(w["hostname"]))


def heartbeats_complete() -> bool:
    """Whether every live worker has announced itself since Redis started: false for the first
    WORKER_HEARTBEAT_TTL seconds after a restart, when live_workers() can miss workers that are alive."""
    return int(get_redis().info("server")["uptime_in_seconds"]) >= settings.WORKER_HEARTBEAT_TTL
