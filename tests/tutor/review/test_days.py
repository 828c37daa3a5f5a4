"""The learner's study day starts at 04:00 in their own time zone."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tutor.review.days import day_bounds, learner_zone, study_day

UTC_ZONE = ZoneInfo("UTC")


def test_a_review_at_0359_belongs_to_the_day_before_and_0400_starts_a_new_day():
    assert study_day(datetime(2026, 11, 23, 3, 59, 59, tzinfo=UTC), UTC_ZONE) == date(2026, 11, 22)
    assert study_day(datetime(2026, 11, 23, 4, 0, tzinfo=UTC), UTC_ZONE) == date(2026, 11, 23)


def test_a_non_utc_learner_rolls_over_at_their_own_0400():
    tokyo = learner_zone("Asia/Tokyo")  # UTC+9, no daylight saving
    assert study_day(datetime(2026, 11, 22, 18, 59, tzinfo=UTC), tokyo) == date(2026, 11, 22)  # 03:59 in Tokyo
    assert study_day(datetime(2026, 11, 22, 19, 0, tzinfo=UTC), tokyo) == date(2026, 11, 23)  # 04:00 in Tokyo
    start, end = day_bounds(date(2026, 11, 23), tokyo)
    assert start == datetime(2026, 11, 22, 19, 0, tzinfo=UTC) and end - start == timedelta(hours=24)


@pytest.mark.parametrize(("day", "hours"), [(date(2026, 3, 28), 23), (date(2026, 10, 24), 25)])
def test_the_day_across_a_daylight_saving_change_is_23_or_25_hours_and_its_bounds_agree_with_study_day(day, hours):
    berlin = learner_zone("Europe/Berlin")  # clocks go forward on 2026-03-29 and back on 2026-10-25
    start, end = day_bounds(day, berlin)
    assert (end.astimezone(UTC) - start.astimezone(UTC)) == timedelta(hours=hours)
    assert end.astimezone(berlin).hour == 4
    assert study_day(start, berlin) == day
    assert study_day(end - timedelta(microseconds=1), berlin) == day
    assert study_day(end, berlin) == day + timedelta(days=1)


@pytest.mark.parametrize("name", ["Mars/Olympus_Mons", "", "../../etc/passwd", "not a zone"])
def test_an_unknown_time_zone_falls_back_to_utc(name):
    assert learner_zone(name) == UTC_ZONE
