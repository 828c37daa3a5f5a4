"""A learner's statistics. Every figure says how it is computed (see `METHODS`)."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta

from django.db.models import Count
from django.utils import timezone

from quizzes.models import Card, Lesson, Topic
from tutor.review.days import as_utc, day_bounds, learner_zone, study_day
from tutor.review.models import CardState, ReviewLog, State
from tutor.review.scheduling import retrievability, scheduler_for
from tutor.review.services import learner_settings

METHODS = {
    "heatmap": "Reviews per study day (days start at 04:00 your time), undone reviews excluded.",
    "retention": "True retention: share of reviews of cards in the Review state rated Hard, Good or Easy "
    "(not Again) over the last 30 days; learning steps and new cards excluded.",
    "forecast": "Cards in your deck whose FSRS due date falls on each of the next 30 days.",
    "mastery": "Mean FSRS retrievability now (probability you recall it today) over every card of the topic "
    "or lesson; unseen cards count as 0.",
    "streak": "Consecutive study days with at least one review, ending today (or yesterday if you have not "
    "reviewed yet today).",
}


def learner_stats(user, *, now: datetime | None = None) -> dict:
    now = as_utc(now or timezone.now(), "now")
    settings_obj = learner_settings(user)
    zone = learner_zone(settings_obj.timezone)
    today = study_day(now, zone)
    logs = ReviewLog.objects.filter(user=user, undone_at__isnull=True)

    per_day: Counter = Counter()
    year_start, _ = day_bounds(today - timedelta(days=364), zone)
    for reviewed_at in logs.filter(reviewed_at__gte=year_start).values_list("reviewed_at", flat=True).iterator():
        per_day[study_day(reviewed_at, zone)] += 1
    heatmap = [
        {"date": (today - timedelta(days=i)).isoformat(), "count": per_day.get(today - timedelta(days=i), 0)}
        for i in range(364, -1, -1)
    ]

    month_ago = now - timedelta(days=30)
    mature = logs.filter(reviewed_at__gte=month_ago, state_before=State.REVIEW)
    mature_total = mature.count()
    mature_passed = mature.exclude(rating=1).count()

    forecast_counts: Counter = Counter()
    _, today_end = day_bounds(today, zone)
    for due in CardState.objects.filter(
        user=user, card__retired=False, due__lt=today_end + timedelta(days=30)
    ).values_list("due", flat=True):
        day = max(study_day(due, zone), today)
        forecast_counts[day] += 1
    next_days = [today + timedelta(days=i) for i in range(30)]
    forecast = [{"date": d.isoformat(), "count": forecast_counts.get(d, 0)} for d in next_days]

    streak = 0
    day = today if per_day.get(today) else today - timedelta(days=1)
    while per_day.get(day):
        streak += 1
        day -= timedelta(days=1)

    return {
        "methods": METHODS,
        "desired_retention": settings_obj.desired_retention,
        "true_retention": (mature_passed / mature_total) if mature_total else None,
        "retention_reviews": mature_total,
        "total_reviews": logs.count(),
        "reviews_today": per_day.get(today, 0),
        "streak_days": streak,
        "heatmap": heatmap,
        "forecast": forecast,
        "mastery": mastery(user, now=now),
    }


def mastery(user, *, now: datetime) -> dict:
    scheduler = scheduler_for(learner_settings(user))
    recall: dict[int, float] = defaultdict(float)
    seen: dict[int, int] = defaultdict(int)
    for state in CardState.objects.filter(user=user, reverse=False, card__retired=False):
        recall[state.card_id] = retrievability(scheduler, state, now)
        seen[state.card_id] = 1
    active = Card.objects.filter(retired=False)

    def summarise(groups) -> list[dict]:
        rows = []
        for obj, card_ids in groups:
            if not card_ids:
                continue
            rows.append(
                {
                    "id": obj.slug,
                    "course": obj.course.slug,
                    "title": obj.title,
                    "cards": len(card_ids),
                    "studied": sum(seen[c] for c in card_ids),
                    "mastery": round(sum(recall[c] for c in card_ids) / len(card_ids), 4),
                }
            )
        return rows

    topic_cards: dict[int, list[int]] = defaultdict(list)
    for card_id, topic_id in active.filter(topics__isnull=False).values_list("pk", "topics"):
        topic_cards[topic_id].append(card_id)
    lesson_cards: dict[int, set[int]] = defaultdict(set)
    for card_id, lesson_id in active.values_list("pk", "sections__lesson"):
        if lesson_id:
            lesson_cards[lesson_id].add(card_id)
    topics = Topic.objects.select_related("course").annotate(n=Count("cards")).order_by("course", "position")
    lessons = Lesson.objects.select_related("course").order_by("course", "position")
    return {
        "topics": summarise((t, topic_cards.get(t.pk, [])) for t in topics),
        "lessons": summarise((lesson, sorted(lesson_cards.get(lesson.pk, set()))) for lesson in lessons),
    }
