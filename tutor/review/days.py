"""The learner's day: it starts at 04:00 local time (as in Anki), so a late-night review counts
for the day it belongs to."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAY_START_HOUR = 4


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
