"""The queues, and the one way every app puts a task on them.

"default" takes CPU work (grading, optimization, CPU labs); "gpu" takes lab runs, one worker
process per GPU. Every worker on "gpu" also takes "gpu.<device kind>" ("gpu.h100", "gpu.h200",
"gpu.cpu"): runs asked for a kind go there, so they land only on that kind of device.

A task is sent once the caller's transaction commits, so a worker never looks for a row that is
not there yet. A service must keep the learner's request when the broker cannot
be reached, so the broker's failure goes to the service's own fallback instead of raising.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from celery import Celery, Task
from django.db import transaction
from kombu import Queue

DEFAULT = "default"
GPU = "gpu"
ALL = (Queue(DEFAULT, routing_key=DEFAULT), Queue(GPU, routing_key=GPU))


def gpu_queue(kind: str) -> str:
    """The queue of one device kind's workers: "gpu.h100"."""
    return f"{GPU}.{kind}"


def is_gpu_queue(name: str) -> bool:
    return name == GPU or name.startswith(GPU + ".")


# kombu's Redis transport keeps a queue as a list under its name, and messages sent with a
# priority in lists named "<queue>\x06\x16<priority>" (its default steps: 0, 3, 6, 9).
PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")


def queue_depth(client, name: str) -> int:
    """Messages waiting in queue `name` (not those a worker has taken)."""
    pipe = client.pipeline()
    for suffix in PRIORITY_SUFFIXES:
        pipe.llen(name + suffix)
    return sum(pipe.execute())


def known_queues(client) -> list[str]:
    """The queues that exist on the broker now (default, gpu and every gpu.<kind>), sorted."""
    names = {DEFAULT, GPU}
    for raw in client.scan_iter(match=GPU + ".*", count=200, _type="list"):
        name = raw.decode() if isinstance(raw, bytes) else raw
        names.add(name.split("\x06\x16")[0])
    return sorted(names)


# Celery's Redis result backend gives up with "... The Celery application must be restarted.": not so here, the
# next task sent once Redis is back goes through (tests/workers/test_queues.py), so a learner is not told that.
_RESTART_ADVICE = re.compile(r"\s*The Celery application must be restarted\.?")


def broker_unavailable(exc: BaseException, limit: int = 200) -> str:
    """One line saying that the broker is down, with its error squeezed to `limit` characters."""
    reason = _RESTART_ADVICE.sub("", " ".join(str(exc).split()))
    return f"the task broker is unavailable ({reason[:limit]})"


def send_on_commit(
    task: Task,
    *,
    args: list,
    queue: str,
    on_broker_down: Callable[[str], None],
    on_sent: Callable[[str], None] | None = None,
    task_id: str | None = None,
) -> None:
    """Queue `task(*args)` when the current transaction commits (at once outside one). Then on_sent(task id),
    or on_broker_down(reason) if the broker cannot take it. `task_id`: the id to send it under (one the caller
    stored beforehand, so that a worker that gets the message at once already finds it)."""

    def send() -> None:
        try:
            task_id_sent = task.apply_async(args=args, queue=queue, task_id=task_id).id
        except Exception as exc:  # kombu, redis and socket errors all mean the same to the learner
            on_broker_down(broker_unavailable(exc))
            return
        if on_sent is not None:
            on_sent(task_id_sent)

    transaction.on_commit(send)


def task_ids_in_broker(app: Celery, queues: tuple[str, ...] = (DEFAULT, GPU)) -> set[str] | None:
    """The ids of the tasks the Redis broker holds: waiting in one of `queues` (every priority level), or
    delivered to a worker and not acknowledged yet. None when that cannot be told (another transport, or the
    broker is down). A Redis that restarted without persistence holds none of the messages sent before."""
    try:
        with app.connection_for_read() as conn:
            channel = conn.default_channel
            if not hasattr(channel, "unacked_key"):
                return None  # not kombu's Redis transport
            client = channel.client
            payloads = [json.loads(raw)[0] for raw in client.hvals(channel.unacked_key)]
            for queue in queues:
                for priority in channel.priority_steps:
                    payloads += [json.loads(raw) for raw in client.lrange(channel._q_for_pri(queue, priority), 0, -1)]
    except Exception:  # kombu, redis and socket errors: cannot tell
        return None
    return {
        str((p.get("headers") or {}).get("id") or (p.get("properties") or {}).get("correlation_id")) for p in payloads
    }
