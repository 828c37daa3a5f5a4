"""Celery tasks: thin wrappers that call services in tutor/, quizzes/ and labs/."""

import os
import socket

from celery.signals import worker_ready
from django.conf import settings

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


@app.task(name="labs.run_lab", bind=True, acks_late=True, reject_on_worker_lost=True,
          soft_time_limit=settings.LAB_SOFT_TIME_LIMIT, time_limit=settings.LAB_SOFT_TIME_LIMIT + 60)
def run_lab(self, run_id: int) -> dict[str, object]:
    """Run one lab experiment. GPU workers take one at a time (concurrency 1, prefetch 1)."""
    from labs.services import execute_run

    run = execute_run(run_id, task_id=self.request.id or "", worker=self.request.hostname or "")
    return {"run": run_id, "status": run.status if run else "missing"}


@worker_ready.connect
def _reap_runs_left_by_a_dead_worker(**kwargs) -> None:
    """A worker that starts re-queues (once) the runs that died with a previous worker."""
    from labs.services import reap_stale_runs

    try:
        reap_stale_runs()
    except Exception:  # never stop a worker from starting over this
        pass


@app.task(name="tutor.grade_answer", acks_late=True)
def grade_answer(grade_id: int) -> dict[str, object]:
    """Grade a typed interview/recall answer against the card's rubric (LLM or embeddings: worker-side)."""
    from tutor.answer_grading import run_grade

    grade = run_grade(grade_id)
    return {"grade": grade.pk, "status": grade.status}
