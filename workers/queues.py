"""The queues, and the one way every app puts a task on them.

"default" takes CPU work (grading, optimization, CPU labs); "gpu" takes lab runs, one worker
process per GPU. A task is sent once the caller's transaction commits, so a worker never looks
for a row that is not there yet. A service must keep the learner's request when the broker cannot
be reached, so the broker's failure goes to the service's own fallback instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable

from celery import Task
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
) -> None:
    """Queue `task(*args)` when the current transaction commits (at once outside one). Then on_sent(task id),
    or on_broker_down(reason) if the broker cannot take it."""

    def send() -> None:
        try:
            task_id = task.apply_async(args=args, queue=queue).id
        except Exception as exc:  # kombu, redis and socket errors all mean the same to the learner
            on_broker_down(broker_unavailable(exc))
            return
        if on_sent is not None:
            on_sent(task_id)

    transaction.on_commit(send)
