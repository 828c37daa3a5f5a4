"""Today's review queue: due cards first (lowest predicted recall first, across all of them), then new
cards up to the daily limit. The database ranks and limits; nothing loops over a whole deck in Python."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Case, Count, DateTimeField, F, FloatField, Func, Q, QuerySet, Value, When, Window
from django.utils import timezone

from quizzes.models import Card
from tutor.review.days import as_utc, day_bounds, learner_zone, study_day
from tutor.review.models import CardState, ReviewLog, State
from tutor.review.scheduling import interval_previews, retrievability, scheduler_for, to_fsrs_card
from tutor.review.services import learner_settings


class WholeDaysSinceReview(Func):
    """Whole days from a state's last review to `now`, counted as fsrs counts them: (now - last).days, at least 0."""

    output_field = FloatField()

    def __init__(self, now: datetime):
        super().__init__(Value(now, output_field=DateTimeField()), F("last_review"))

    def _compiled(self, compiler, connection) -> tuple[str, str, list]:
        now_sql, now_params = compiler.compile(self.source_expressions[0])
        last_sql, last_params = compiler.compile(self.source_expressions[1])
        return now_sql, last_sql, [*now_params, *last_params]

    def as_postgresql(self, compiler, connection, **extra):
        now_sql, last_sql, params = self._compiled(compiler, connection)
        return f"GREATEST(0, FLOOR(EXTRACT(EPOCH FROM ({now_sql} - {last_sql})) / 86400))", params

    def as_sqlite(self, compiler, connection, **extra):
        now_sql, last_sql, params = self._compiled(compiler, connection)
        return f"MAX(0, CAST(julianday({now_sql}) - julianday({last_sql}) AS INTEGER))", params


def lowest_recall_first(states: QuerySet[CardState], now: datetime) -> QuerySet[CardState]:
    """Order card states by predicted recall, lowest first, in the database (ties: earliest due).

    FSRS predicts recall R = (1 + F·t/S)^D, with t the whole days since the last review, S the stability
    and F > 0 > D fixed for one learner's parameters: R falls as t/S grows, so ordering by t/S descending
    is ordering by R ascending, over every due card, without evaluating the curve row by row.
    A state without a stability or a last review has R = 0 (fsrs's convention) and comes first.
    """
    unknown = Q(stability__isnull=True) | Q(stability__lte=0) | Q(last_review__isnull=True)
    key = Case(
        When(unknown, then=Value(float("inf"))),
        default=WholeDaysSinceReview(now) / F("stability"),
        output_field=FloatField(),
    )
    return states.annotate(forgetting=key).order_by("-forgetting", "due", "pk")


@dataclass
class QueueItem:
    card: Card
    reverse: bool
    state: CardState | None
    retrievability: float | None
    intervals: dict[int, str] = field(default_factory=dict)

    @property
    def version(self) -> int:
        return self.state.version if self.state else 0

    @property
    def is_new(self) -> bool:
        return self.state is None


@dataclass
class Queue:
    items: list[QueueItem]
    due_count: int
    new_count: int
    reviewed_today: int
    new_introduced_today: int
    new_limit: int

    @property
    def total_today(self) -> int:
        return self.reviewed_today + self.due_count + self.new_count


# What tutor.review.presenters.queue_item reads of a card that is listed but not shown.
LISTED_CARD_FIELDS = ("id", "course_id", "slug", "kind", "choices", "unit", "reversible", "retired")


def today_queue(user, *, now: datetime | None = None, limit: int = 20) -> Queue:
    now = as_utc(now or timezone.now(), "now")
    settings_obj = learner_settings(user)
    zone = learner_zone(settings_obj.timezone)
    day_start, day_end = day_bounds(study_day(now, zone), zone)
    scheduler = scheduler_for(settings_obj)

    # Review cards due any time today are shown now; learning steps wait for their minute.
    due_qs = CardState.objects.filter(user=user, due__lt=day_end, card__retired=False).exclude(
        state__in=(State.LEARNING, State.RELEARNING), due__gt=now
    )
    # The whole due count rides along on the ranked rows (COUNT(*) OVER ()): one query instead of two.
    ranked = list(lowest_recall_first(due_qs, now).annotate(due_total=Window(Count("pk")))[:limit])
    due_count = ranked[0].due_total if ranked else 0

    today = ReviewLog.objects.filter(
        user=user, reviewed_at__gte=day_start, reviewed_at__lt=day_end, undone_at__isnull=True
    ).aggregate(reviewed=Count("pk"), new=Count("pk", filter=Q(state_before=State.NEW)))
    new_budget = max(0, settings_obj.new_cards_per_day - today["new"])
    new_keys = _new_card_keys(user, new_budget) if new_budget else []

    keys = [(s.card_id, s.reverse, s) for s in ranked]
    keys += [(card_id, reverse, None) for card_id, reverse in new_keys[: max(0, limit - len(keys))]]
    ids = [card_id for card_id, _, _ in keys]
    # The first card is shown, so all of it; the rest are listed, so only what a list item says (their text
    # and rendered HTML are most of each row, and this runs before every card a learner sees).
    cards = Card.objects.only(*LISTED_CARD_FIELDS).in_bulk(ids[1:])
    if ids:
        cards[ids[0]] = Card.objects.select_related("course").get(pk=ids[0])
    items = [
        QueueItem(cards[card_id], reverse, state, None if state is None else retrievability(scheduler, state, now))
        for card_id, reverse, state in keys
    ]
    for item in items[:1]:
        item.intervals = interval_previews(scheduler, to_fsrs_card(item.state, item.card.pk), now)
    return Queue(
        items=items,
        due_count=due_count,
        new_count=len(new_keys),
        reviewed_today=today["reviewed"],
        new_introduced_today=today["new"],
        new_limit=settings_obj.new_cards_per_day,
    )


# Unseen cards in course order, and a glossary card's reverse side once its front was studied: one
# index-backed query (NOT EXISTS on the card_state_unique index), ordered by course position.
_NEW_CARDS_SQL = """
SELECT id, is_reverse FROM (
    SELECT c.id, c.course_id, c.position, 0 AS is_reverse FROM quizzes_card c
    WHERE NOT c.retired AND NOT EXISTS (
        SELECT 1 FROM tutor_cardstate s WHERE s.user_id = %s AND s.card_id = c.id AND s.reverse = %s)
    UNION ALL
    SELECT c.id, c.course_id, c.position, 1 AS is_reverse FROM quizzes_card c
    WHERE NOT c.retired AND c.reversible
      AND EXISTS (SELECT 1 FROM tutor_cardstate s WHERE s.user_id = %s AND s.card_id = c.id AND s.reverse = %s)
      AND NOT EXISTS (SELECT 1 FROM tutor_cardstate s WHERE s.user_id = %s AND s.card_id = c.id AND s.reverse = %s)
) AS candidates
ORDER BY is_reverse, course_id, position, id
LIMIT %s
"""


def _new_card_keys(user, budget: int) -> list[tuple[int, bool]]:
    """Unseen cards in course order; a glossary card's reverse side once its front was studied."""
    with connection.cursor() as cursor:
        cursor.execute(_NEW_CARDS_SQL, [user.pk, False, user.pk, False, user.pk, True, budget])
        return [(card_id, bool(is_reverse)) for card_id, is_reverse in cursor.fetchall()]


def tomorrow_forecast(user, *, now: datetime | None = None) -> int:
    """How many cards come due during the learner's next study day."""
    now = as_utc(now or timezone.now(), "now")
    zone = learner_zone(learner_settings(user).timezone)
    _, tomorrow_start = day_bounds(study_day(now, zone), zone)
    return CardState.objects.filter(
        user=user, card__retired=False, due__gte=tomorrow_start, due__lt=tomorrow_start + timedelta(days=1)
    ).count()


def next_due(user) -> datetime | None:
    """When the learner's earliest scheduled card comes due (None before any review)."""
    return (
        CardState.objects.filter(user=user, card__retired=False).order_by("due").values_list("due", flat=True).first()
    )
