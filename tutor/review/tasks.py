"""Celery tasks of the review domain: thin wrappers over its services, found by autodiscovery."""

from workers.app import app


@app.task(name="tutor.optimize_parameters", acks_late=True)
def optimize_parameters(run_id: int) -> dict[str, object]:
    """Fit a learner's FSRS parameters (needs torch: runs on a worker, never in web)."""
    from tutor.review.optimizer import run_optimization

    run = run_optimization(run_id)
    return {"run": run.pk, "status": run.status, "adopted": run.adopted}
