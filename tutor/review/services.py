"""Writes of the review domain: submit a review, undo it, rebuild states from the log.

Every path (web page, API, management command) calls these functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import fsrs
from django.db import IntegrityError, transaction
from django.utils import timezone

from quizzes.models import Card
from tutor.errors import DomainError
from tutor.review.answer_check import Grade, check_answer
from tutor.review.days import as_utc
from tutor.review.models import CardState, LearnerSettings, ReviewLog, State
from tutor.review.scheduling import LogEntry, copy_into_state, replay, scheduler_for, to_fsrs_card
from tutor.review.study_sessions import touch_session

# Clocks differ a little between browser and server; more than this in the future is refused.
FUTURE_SLACK = timedelta(seconds=30)
MAX_ANSWER_CHARS = 5000


def learner_settings(user) -> LearnerSettings:
    obj, _ = LearnerSettings.objects.get_or_create(user=user)
    return obj


def lock_learner(user) -> LearnerSettings:
    """The learner's settings row, locked until the caller's transaction ends.

    Per-learner limits (active lab runs, questions a minute, queued jobs) count rows and then insert
    one. Locking the rows counted locks nothing when there are none yet, so parallel requests
    would all pass; they lock this one row, which always exists, and so take turns. On SQLite the
    write transaction (BEGIN IMMEDIATE) already serializes them.
    """
    learner_settings(user)  # created outside the lock the first time
    return LearnerSettings.objects.select_for_update().get(user=user)


@dataclass(frozen=True)
class ReviewOutcome:
    review: ReviewLog
    state: CardState | None  # None only for a duplicate whose review was undone and was the card's only one
    duplicate: bool
    grade: Grade | None


def submit_review(
    *,
    user,
    card_id: int,
    rating: int,
    idempotency_key: str,
    reverse: bool = False,
    duration_ms: int | None = None,
    answer: str = "",
    expected_version: int | None = None,
    reviewed_at: datetime | None = None,
) -> ReviewOutcome:
    """Record one review and advance the card. The same idempotency key records it only once;
    `expected_version` (the state version the learner saw) refuses a second tab's stale rating."""
    now = timezone.now()
    server_time = reviewed_at is None
    reviewed_at = reviewed_at or now
    _validate(
        rating=rating,
        idempotency_key=idempotency_key,
        duration_ms=duration_ms,
        answer=answer,
        reviewed_at=reviewed_at,
        now=now,
    )
    reviewed_at = as_utc(reviewed_at)
    existing = _existing(user, idempotency_key)
    if existing:
        return existing
    card = Card.objects.filter(pk=card_id).first()
    if card is None:
        raise DomainError(f"No card with id {card_id}.", "card", status=404)
    if card.retired:
        raise DomainError("This card is retired and no longer reviewed.", "card")
    if reverse and not card.reversible:
        raise DomainError("This card is not studied in reverse.", "reverse")
    graded = check_answer(card, answer) if answer else None
    try:
        with transaction.atomic():
            return _record(
                user=user,
                card=card,
                reverse=reverse,
                rating=rating,
                idempotency_key=idempotency_key,
                duration_ms=duration_ms,
                answer=answer,
                graded=graded,
                expected_version=expected_version,
                reviewed_at=reviewed_at,
                server_time=server_time,
            )
    except IntegrityError:
        # A concurrent request won the race: the same key (a retry) or the same new card (a 2nd tab).
        existing = _existing(user, idempotency_key)
        if existing:
            return existing
        raise DomainError(
            "This card was just reviewed in another tab; reload to continue.", "card", status=409
        ) from None


def _validate(*, rating, idempotency_key, duration_ms, answer, reviewed_at, now) -> None:
    if not isinstance(rating, int) or isinstance(rating, bool) or rating not in (1, 2, 3, 4):
        raise DomainError("Rating must be 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy).", "rating")
    if not idempotency_key or len(idempotency_key) > 64:
        raise DomainError("Send an idempotency key of 1-64 characters with each review.", "idempotency_key")
    if duration_ms is not None and not 0 <= duration_ms <= 86_400_000:
        raise DomainError("Duration must be between 0 and 86400000 ms.", "duration_ms")
    if len(answer) > MAX_ANSWER_CHARS:
        raise DomainError(f"Answers are limited to {MAX_ANSWER_CHARS} characters.", "answer")
    if timezone.is_naive(reviewed_at):
        raise DomainError("The review time needs a time zone.", "reviewed_at")
    if reviewed_at > now + FUTURE_SLACK:
        raise DomainError("The review time is in the future.", "reviewed_at")


def _existing(user, idempotency_key: str) -> ReviewOutcome | None:
    """The review this key already recorded, with the card's state as it is now.

    A key records one review, ever: after that review was undone, the key still answers with it
    (its `undone_at` set) and records nothing, and the state is whatever the rest of the log implies
    (None when the undone review was the card's only one). Rating the card again takes a new key.
    """
    review = ReviewLog.objects.filter(user=user, idempotency_key=idempotency_key).first()  # no join: usually none
    if review is None:
        return None
    state = CardState.objects.filter(user=user, card_id=review.card_id, reverse=review.reverse).first()
    return ReviewOutcome(review, state, duplicate=True, grade=None)


def _record(
    *,
    user,
    card: Card,
    reverse: bool,
    rating: int,
    idempotency_key: str,
    duration_ms: int | None,
    answer: str,
    graded: Grade | None,
    expected_version: int | None,
    reviewed_at: datetime,
    server_time: bool,
) -> ReviewOutcome:
    state = CardState.objects.select_for_update().filter(user=user, card=card, reverse=reverse).first()
    # A retry of the same review may have waited on the lock above while the first one committed.
    existing = _existing(user, idempotency_key)
    if existing:
        return existing
    version = state.version if state else 0
    if server_time and state and state.last_review and reviewed_at < state.last_review:
        reviewed_at = state.last_review  # our own clock, a moment behind a review that just committed
    if expected_version is not None and expected_version != version:
        raise DomainError(
            "This card was already reviewed (in another tab?); reload to continue.", "expected_version", status=409
        )
    if state and state.last_review and reviewed_at < state.last_review:
        raise DomainError("The review time is before this card's last review.", "reviewed_at")
    settings_obj = learner_settings(user)
    scheduler = scheduler_for(settings_obj)
    before = to_fsrs_card(state, card.pk)
    state_before = state.state if state else State.NEW
    after, _ = scheduler.review_card(before, fsrs.Rating(rating), reviewed_at, duration_ms)
    session = touch_session(user, reviewed_at)
    review = ReviewLog.objects.create(
        user=user,
        card=card,
        reverse=reverse,
        rating=rating,
        reviewed_at=reviewed_at,
        duration_ms=duration_ms,
        answer=answer,
        answer_correct=graded.correct if graded else None,
        state_before=state_before,
        idempotency_key=idempotency_key,
        session=session,
    )
    if state is None:
        state = CardState(user=user, card=card, reverse=reverse, version=0)
    else:
        state.card = card  # the row we already have, for the response (card_slug), instead of a query
    copy_into_state(state, after)
    state.reps += 1
    state.lapses += 1 if (state_before == State.REVIEW and rating == 1) else 0
    state.version += 1
    state.save()
    return ReviewOutcome(review, state, duplicate=False, grade=graded)


def undo_last_review(*, user) -> ReviewLog:
    """Mark the learner's latest review undone (the row stays) and rebuild that card's state."""
    with transaction.atomic():
        review = (
            ReviewLog.objects.select_for_update()
            .filter(user=user, undone_at__isnull=True)
            .order_by("-reviewed_at", "-id")
            .first()
        )
        if review is None:
            raise DomainError("There is no review to undo.", status=404)
        review.undone_at = timezone.now()
        review.save(update_fields=["undone_at"])
        rebuild_card_state(user=user, card_id=review.card_id, reverse=review.reverse)
    return review


def replay_card(user, card_id: int, reverse: bool, settings_obj: LearnerSettings | None = None):
    """The state the log implies for one card: (fsrs card, reps, lapses) or None if never reviewed."""
    settings_obj = settings_obj or learner_settings(user)
    entries = [
        LogEntry(r, t, d)
        for r, t, d in ReviewLog.objects.filter(user=user, card_id=card_id, reverse=reverse, undone_at__isnull=True)
        .order_by("reviewed_at", "id")
        .values_list("rating", "reviewed_at", "duration_ms")
    ]
    return replay(scheduler_for(settings_obj), card_id, entries)


def rebuild_card_state(*, user, card_id: int, reverse: bool, settings_obj: LearnerSettings | None = None) -> None:
    """Replay one card's log into its state. The state's row is locked before the log is read, so a review
    committed meanwhile is either in the replay or waits for this rebuild and then builds on it."""
    state = CardState.objects.select_for_update().filter(user=user, card_id=card_id, reverse=reverse).first()
    replayed = replay_card(user, card_id, reverse, settings_obj)
    if replayed is None:
        if state:
            state.delete()
        return
    if state is None:
        state = CardState(user=user, card_id=card_id, reverse=reverse, version=0)
    copy_into_state(state, replayed.card)
    state.reps, state.lapses = replayed.reps, replayed.lapses
    state.version += 1
    state.save()


def card_keys(user) -> list[tuple[int, bool]]:
    """Every (card, direction) of the learner with a state or a review: what a full rebuild touches."""
    keys = set(ReviewLog.objects.filter(user=user).values_list("card_id", "reverse").distinct())
    keys |= set(CardState.objects.filter(user=user).values_list("card_id", "reverse"))
    return sorted(keys)


def rebuild_learner(user) -> int:
    """Recompute every card state of a learner from the log, in one transaction. Returns states written."""
    settings_obj = learner_settings(user)
    keys = card_keys(user)
    with transaction.atomic():
        for card_id, reverse in keys:
            rebuild_card_state(user=user, card_id=card_id, reverse=reverse, settings_obj=settings_obj)
    return len(keys)


def state_differences(user) -> list[str]:
    """Where the live projection and a replay of the log disagree (empty when consistent)."""
    settings_obj = learner_settings(user)
    problems = []
    live = {(s.card_id, s.reverse): s for s in CardState.objects.filter(user=user)}
    keys = set(live) | set(
        ReviewLog.objects.filter(user=user, undone_at__isnull=True).values_list("card_id", "reverse").distinct()
    )
    for key in sorted(keys):
        replayed = replay_card(user, key[0], key[1], settings_obj)
        state = live.get(key)
        if replayed is None or state is None:
            problems.append(
                f"card {key[0]}{'r' if key[1] else ''}: live={state is not None} log={replayed is not None}"
            )
            continue
        c = replayed.card
        expected = (
            int(c.state),
            c.step,
            c.stability,
            c.difficulty,
            c.due,
            c.last_review,
            replayed.reps,
            replayed.lapses,
        )
        got = (
            state.state,
            state.step,
            state.stability,
            state.difficulty,
            state.due,
            state.last_review,
            state.reps,
            state.lapses,
        )
        if not _same(expected, got):
            problems.append(f"card {key[0]}{'r' if key[1] else ''}: live {got} != log {expected}")
    return problems


def _same(a: tuple, b: tuple) -> bool:
    for x, y in zip(a, b, strict=True):
        if isinstance(x, float) and isinstance(y, float):
            if abs(x - y) > 1e-9 * max(1.0, abs(x)):
                return False
        elif x != y:
            return False
    return True
