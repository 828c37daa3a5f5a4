"""The queues, and the one way every app puts a task on them.

"default" takes CPU work (grading, optimization, CPU labs); "gpu" takes lab runs, one worker
process per GPU. A service that enqueues must keep the learner's request when the broker cannot
be reached, so `send` hands the broker's failure to the service's own fallback instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable

from celery import Task
from kombu import Queue

DEFAULT = "default"
GPU = "gpu"
ALL = (Queue(DEFAULT, routing_key=DEFAULT), Queue(GPU, routing_key=GPU))


def broker_unavailable(exc: BaseException, limit: int = 200) -> str:
    """One line saying that the broker is down, with its error squeezed to `limit` characters."""
    return f"the task broker is unavailable ({' '.join(str(exc).split())[:limit]})"


def send(task: Task, *, args: list, queue: str, on_broker_down: Callable[[str], None]) -> str | None:
    """Queue `task(*args)` and return its id; if the broker cannot take it, call on_broker_down(reason)."""
    try:
        return task.apply_async(args=args, queue=queue).id
    except Exception as exc:  # kombu, redis and socket errors all mean the same to the learner
        on_broker_down(broker_unavailable(exc))
        return None
