"""The queues, and the one way every app puts a task on them.

"default" takes CPU work (grading, optimization, CPU labs); "gpu" takes lab runs, one worker
process per GPU. A task is sent once the caller's transaction commits, so a worker never looks
for a row that is not there yet. A service must keep the learner's request when the broker cannot
be reached, so the broker's failure goes to the service's own fallback instead of raising.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from celery import Celery, Task
from django.db import transaction
from kombu import Queue

DEFAULT = "default"
GPU = "gpu"
ALL = (Queue(DEFAULT, routing_key=DEFAULT), Queue(GPU, routing_key=GPU))


def broker_unavailable(exc: BaseException, limit: int = 200) -> str:
    """One line saying that the broker is down, with its error squeezed to `limit` characters."""
    return f"the task broker is unavailable ({' '.join(str(exc).split())[:limit]})"


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
