"""Celery tasks of the labs: thin wrappers over labs.services, found by autodiscovery."""

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
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
        logger.exception("could not reap the runs of dead workers")


logger = logging.getLogger(__name__)
_stop_sweeping = threading.Event()


@worker_ready.connect
def _sweep_for_lost_runs(**kwargs) -> None:
    """Every worker looks, at start and then every LAB_REQUEUE_SECONDS, for queued runs whose queue message
    was lost (labs.services.requeue_lost_runs), so that no run stays queued forever after a broker restart."""

    def sweep() -> None:
        from django.db import connection

        from labs.services import requeue_lost_runs

        while True:
            try:
                requeue_lost_runs()
            except Exception:  # the database or the broker is briefly away: next time
                logger.exception("could not look for lost lab runs")
            finally:
                connection.close()  # this thread's own connection: none held between sweeps
            if _stop_sweeping.wait(settings.LAB_REQUEUE_SECONDS):
                return

    threading.Thread(target=sweep, name="tilewise-lost-runs", daemon=True).start()


@worker_shutdown.connect
def _stop_sweep(**kwargs) -> None:
    _stop_sweeping.set()
