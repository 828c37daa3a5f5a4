"""Celery tasks of the labs: thin wrappers over labs.services, found by autodiscovery."""

from celery.signals import worker_ready
from django.conf import settings

from workers.app import app


@app.task(
    name="labs.run_lab",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.LAB_SOFT_TIME_LIMIT,
    time_limit=settings.LAB_SOFT_TIME_LIMIT + 60,
)
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
