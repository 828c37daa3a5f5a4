"""Celery tasks of the review domain: thin wrappers over its services, found by autodiscovery."""

from workers.app import app


@app.task(name="tutor.optimize_parameters", acks_late=True)
def optimize_parameters(run_id: int) -> dict[str, object]:
    """Fit a learner's FSRS parameters (needs torch: runs on a worker, never in web)."""
    from tutor.review.optimizer import run_optimization

    run = run_optimization(run_id)
    return {"run": run.pk, "status": run.status, "adopted": run.adopted}


@app.task(name="tutor.reschedule_cards", acks_late=True)
def reschedule_cards(job_id: int) -> dict[str, object]:
    """Re-derive a learner's card states in batches after their settings changed."""
    from tutor.review.rescheduling import run_reschedule

    job = run_reschedule(job_id)
    return {"job": job.pk, "status": job.status, "done": job.done}
