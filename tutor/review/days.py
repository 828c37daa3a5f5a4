"""The learner's day: it starts at 04:00 local time (as in Anki), so a late-night review counts
for the day it belongs to."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tutor.errors import DomainError

DAY_START_HOUR = 4


def as_utc(moment: datetime, field: str = "reviewed_at") -> datetime:
    """An aware moment in UTC, the one form the fsrs package takes (datetime.UTC, not ZoneInfo("UTC") or +02:00).

    Services normalise every time they are given through here, so a caller may pass any aware time.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise DomainError("The time needs a time zone.", field)
    return moment.astimezone(UTC)


def learner_zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def study_day(moment: datetime, zone: ZoneInfo) -> date:
    return (moment.astimezone(zone) - timedelta(hours=DAY_START_HOUR)).date()


def day_bounds(day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(DAY_START_HOUR), tzinfo=zone)
    return start, start + timedelta(days=1)
