"""Study sessions: what a learner did in one sitting (reviews, chats, lab runs)."""

from __future__ import annotations

from datetime import datetime, timedelta

from tutor.review.models import StudySession

# A gap longer than this starts a new sitting.
SESSION_GAP = timedelta(minutes=30)
# last_activity_at is kept to within this: a learner rating a card every few seconds writes it twice a
# minute, not on every review (a write less in the hot path; pages show it to the minute).
TOUCH_EVERY = timedelta(seconds=30)


def touch_session(user, now: datetime) -> StudySession:
    """The learner's current session (extended to `now`), or a new one after a long gap."""
    session = (
        StudySession.objects.filter(user=user, last_activity_at__gte=now - SESSION_GAP)
        .order_by("-last_activity_at")
        .first()
    )
    if session is None:
        return StudySession.objects.create(user=user, started_at=now, last_activity_at=now)
    if now - session.last_activity_at >= TOUCH_EVERY:
        session.last_activity_at = now
        session.save(update_fields=["last_activity_at"])
    return session
