"""Celery tasks: thin wrappers that call services in tutor/, quizzes/ and labs/."""

import os
import socket

from workers.app import app
from workers.device import describe_device


@app.task(name="workers.ping")
def ping(message: str = "ping") -> dict[str, object]:
    """Round-trip check: proves a worker consumed from the broker and wrote a result."""
    return {"echo": message, "hostname": socket.gethostname(), "pid": os.getpid(),
            "device": describe_device()}


@app.task(name="tutor.optimize_parameters", acks_late=True)
def optimize_parameters(run_id: int) -> dict[str, object]:
    """Fit a learner's FSRS parameters (needs torch: runs on a worker, never in web)."""
    from tutor.optimizer import run_optimization

    run = run_optimization(run_id)
    return {"run": run.pk, "status": run.status, "adopted": run.adopted}
