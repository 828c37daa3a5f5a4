"""Turn review-domain objects into the JSON the API and the review page use."""

from __future__ import annotations

from datetime import datetime

from django.template.loader import render_to_string

from tutor.review.queue import Queue, QueueItem


def card_sides(item: QueueItem) -> dict[str, str]:
    """Front and back HTML of a queue item, rendered by the same template admins preview with."""
    card = item.card
    if item.reverse:
        # Studied back-to-front: the definition is the prompt, the term is the answer.
        front = (
            f'<article class="study-card kind-basic reverse"><div class="card-kind">Which term is this?</div>'
            f'<div class="card-prompt md">{card.answer_html}</div></article>'
        )
        back = front.replace(
            "</article>",
            f'<div class="card-answer"><div class="md big-answer">{card.prompt_html}</div></div></article>',
        )
        return {"front": front, "back": back}
    card.section_links = list(card.sections.select_related("course"))  # each link's URL names its course
    return {
        "front": render_to_string("quizzes/card_face.html", {"card": card, "revealed": False}),
        "back": render_to_string("quizzes/card_face.html", {"card": card, "revealed": True}),
    }


def queue_item(item: QueueItem, *, with_sides: bool) -> dict:
    card = item.card
    data = {
        "card": card.pk,
        "slug": card.slug,
        "kind": card.kind,
        "reverse": item.reverse,
        "is_new": item.is_new,
        "version": item.version,
        "retrievability": None if item.retrievability is None else round(item.retrievability, 4),
        "due": item.state.due.isoformat() if item.state else None,
        "intervals": {str(k): v for k, v in item.intervals.items()},
        "choices": card.choices if card.kind == "predict" and not item.reverse else [],
        "unit": card.unit if card.kind == "numeric" else "",
        "answer_expected": card.kind in ("numeric", "interview", "predict", "recall") and not item.reverse,
    }
    if with_sides:
        data.update(card_sides(item))
    return data


def queue_payload(queue: Queue, *, forecast_tomorrow: int, next_due: datetime | None = None) -> dict:
    """The queue as JSON; `next_due` (when nothing is due now) says when the earliest card comes due."""
    return {
        "progress": {
            "reviewed_today": queue.reviewed_today,
            "due": queue.due_count,
            "new": queue.new_count,
            "total_today": queue.total_today,
            "new_limit": queue.new_limit,
            "new_introduced_today": queue.new_introduced_today,
        },
        "done_for_today": not queue.items,
        "tomorrow_forecast": forecast_tomorrow,
        "next_due": next_due.isoformat() if next_due else None,
        "items": [queue_item(item, with_sides=(i == 0)) for i, item in enumerate(queue.items)],
    }
