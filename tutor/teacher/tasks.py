"""Celery tasks of the teacher: thin wrappers over its services, found by autodiscovery."""

from workers.app import app


@app.task(name="tutor.grade_answer", acks_late=True)
def grade_typed_answer(grade_id: int) -> dict[str, object]:
    """Grade a typed interview/recall answer against the card's rubric (LLM or embeddings: worker-side)."""
    from tutor.teacher.grade_requests import run_grade

    grade = run_grade(grade_id)
    return {"grade": grade.pk, "status": grade.status}
