"""The home page's daily dashboard: one learner's day at a glance.

Every figure comes from the function the API answers with (`today_queue` and `next_due` for the queue,
`learner_stats` for streak, retention and mastery), so the page and /api/review/ never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from labs.experiments.catalog import CATALOG
from labs.models import LabRun
from quizzes.models import Section, Topic
from tutor.review.queue import next_due, today_queue
from tutor.review.services import learner_settings
from tutor.review.stats import METHODS, learner_stats
from tutor.teacher.models import Conversation

RECENT_LAB_RUNS = 3


@dataclass
class WeakestTopic:
    title: str
    mastery: float
    studied: int
    cards: int
    section: Section | None
    lab_id: str
    lab_title: str


@dataclass
class Dashboard:
    due: int
    new: int
    reviewed_today: int
    next_due: datetime | None
    zone: str
    streak_days: int
    true_retention: float | None
    desired_retention: float
    retention_reviews: int
    retention_method: str
    streak_method: str
    weakest: WeakestTopic | None
    lab_runs: list[LabRun]
    conversation: Conversation | None


def weakest_topic(topics: list[dict]) -> WeakestTopic | None:
    """The topic with the lowest mastery among those the learner has studied (all of them before any study).

    `topics` are the rows of `learner_stats(...)["mastery"]["topics"]`; ties go to course order.
    """
    studied = [t for t in topics if t["studied"]] or topics
    if not studied:
        return None
    row = min(studied, key=lambda t: t["mastery"])
    topic = Topic.objects.filter(course__slug=row["course"], slug=row["id"]).first()
    sections = list(topic.sections.select_related("course").order_by("position")) if topic else []
    lab_id = next((lab for s in sections for lab in s.labs if lab in CATALOG), "")
    return WeakestTopic(
        title=row["title"],
        mastery=row["mastery"],
        studied=row["studied"],
        cards=row["cards"],
        section=sections[0] if sections else None,
        lab_id=lab_id,
        lab_title=CATALOG[lab_id].title if lab_id else "",
    )


def daily_dashboard(user, *, now: datetime | None = None) -> Dashboard:
    """What `/` shows a logged-in learner: only their own queue, stats, lab runs and conversations."""
    now = now or timezone.now()
    queue = today_queue(user, now=now, limit=1)
    stats = learner_stats(user, now=now)
    return Dashboard(
        due=queue.due_count,
        new=queue.new_count,
        reviewed_today=queue.reviewed_today,
        next_due=None if queue.due_count else next_due(user),
        zone=learner_settings(user).timezone,
        streak_days=stats["streak_days"],
        true_retention=stats["true_retention"],
        desired_retention=stats["desired_retention"],
        retention_reviews=stats["retention_reviews"],
        retention_method=METHODS["retention"],
        streak_method=METHODS["streak"],
        weakest=weakest_topic(stats["mastery"]["topics"]),
        lab_runs=list(LabRun.objects.filter(user=user)[:RECENT_LAB_RUNS]),
        conversation=Conversation.objects.filter(user=user).first(),
    )
