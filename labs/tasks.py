"""Celery tasks of the labs: thin wrappers over labs.services, found by autodiscovery."""

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from celery.utils import worker_direct
from django.conf import settings

from workers.app import app
from workers.heartbeat import set_warming, this_worker
from workers.queues import is_gpu_queue

logger = logging.getLogger(__name__)
_stop_sweeping = threading.Event()


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


@app.task(name="labs.warm_up", bind=True, soft_time_limit=settings.LAB_SOFT_TIME_LIMIT * 4)
def warm_up(self, experiments: list[str]) -> dict[str, object]:
    """Run each experiment once at its defaults on this worker, so that later runs find every kernel compiled."""
    from labs.services import warm_up_experiments

    try:
        return warm_up_experiments(experiments)
    finally:
        set_warming(self.request.hostname or "", False)


@worker_ready.connect
def _warm_up_at_start(sender=None, **kwargs) -> None:
    """A lab worker sends itself the warm-up (to its own queue): runs sent meanwhile queue behind it."""
    worker = this_worker()
    if not worker or not any(is_gpu_queue(q) for q in worker["queues"]):
        return
    on_gpu = worker["device"].get("kind") == "cuda"
    if settings.LABS_WARM_UP == "false" or (settings.LABS_WARM_UP == "auto" and not on_gpu):
        return
    from labs.services import warm_up_list

    hostname = str(worker["hostname"])
    try:
        set_warming(hostname, True)
        warm_up.apply_async(args=[warm_up_list()], queue=worker_direct(hostname))
    except Exception:  # never stop a worker from starting over this
        set_warming(hostname, False)


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
