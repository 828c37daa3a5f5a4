"""FSRS scheduling through the `fsrs` package; nothing of the algorithm is written here.

Fuzzing is off so that a card's state is a pure function of its review log and the learner's
settings: replaying the log always gives the live state back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import fsrs

from tutor.review.models import CardState, LearnerSettings, State


def scheduler_for(learner: LearnerSettings, parameters: list[float] | None = None) -> fsrs.Scheduler:
    params = parameters if parameters is not None else learner.parameters
    kwargs = {} if not params else {"parameters": tuple(params)}
    return fsrs.Scheduler(
        desired_retention=learner.desired_retention,
        learning_steps=tuple(timedelta(minutes=m) for m in learner.learning_steps),
        relearning_steps=tuple(timedelta(minutes=m) for m in learner.relearning_steps),
        maximum_interval=learner.maximum_interval,
        enable_fuzzing=False,
        **kwargs,
    )


def to_fsrs_card(state: CardState | None, card_id: int) -> fsrs.Card:
    if state is None or state.state == State.NEW:
        return fsrs.Card(card_id=card_id)
    return fsrs.Card(
        card_id=card_id,
        state=fsrs.State(state.state),
        step=state.step,
        stability=state.stability,
        difficulty=state.difficulty,
        due=state.due,
        last_review=state.last_review,
    )


def copy_into_state(state: CardState, card: fsrs.Card) -> None:
    state.state = int(card.state)
    state.step = card.step
    state.stability = card.stability
    state.difficulty = card.difficulty
    state.due = card.due
    state.last_review = card.last_review


@dataclass(frozen=True)
class LogEntry:
    rating: int
    reviewed_at: datetime
    duration_ms: int | None


@dataclass(frozen=True)
class Replayed:
    card: fsrs.Card
    reps: int
    lapses: int


def replay(scheduler: fsrs.Scheduler, card_id: int, entries: Iterable[LogEntry]) -> Replayed | None:
    """Run a card's reviews, oldest first, through FSRS. None when there are no reviews."""
    card = fsrs.Card(card_id=card_id)
    reps = lapses = 0
    for entry in entries:
        was_review = card.state == fsrs.State.Review
        card, _ = scheduler.review_card(card, fsrs.Rating(entry.rating), entry.reviewed_at, entry.duration_ms)
        reps += 1
        if was_review and entry.rating == 1:
            lapses += 1
    return Replayed(card, reps, lapses) if reps else None


def interval_previews(scheduler: fsrs.Scheduler, card: fsrs.Card, now: datetime) -> dict[int, str]:
    """What each rating would schedule, for the rating buttons: {1: "1m", 2: "6m", 3: "10m", 4: "3d"}."""
    return {
        rating: format_interval(scheduler.review_card(card, fsrs.Rating(rating), now)[0].due - now)
        for rating in (1, 2, 3, 4)
    }


def format_interval(delta: timedelta) -> str:
    seconds = max(0, delta.total_seconds())
    if seconds < 3600:
        return f"{max(1, round(seconds / 60))}m"
    if seconds < 86400:
        return f"{round(seconds / 3600)}h"
    days = seconds / 86400
    if days < 31:
        return f"{round(days)}d"
    if days < 365:
        return f"{days / 30.4:.1f}mo".replace(".0mo", "mo")
    return f"{days / 365:.1f}y".replace(".0y", "y")


def retrievability(scheduler: fsrs.Scheduler, state: CardState, now: datetime) -> float:
    if state.state == State.NEW:
        return 0.0
    return float(scheduler.get_card_retrievability(to_fsrs_card(state, state.card_id), now))
