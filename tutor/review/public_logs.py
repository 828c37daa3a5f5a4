"""Public review logs, for replaying a real learner's history through the fit guard.

The format is py-fsrs's test data (open-spaced-repetition/py-fsrs, MIT licence): a CSV with the
columns card_id, review_rating (1-4), review_time (ISO 8601 with an offset) and review_duration (ms).
The data stays out of this repository; pass the file's path.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

from tutor.review.fit_guard import Entry

COLUMNS = ("card_id", "review_rating", "review_time", "review_duration")


class LogFormatError(ValueError):
    """The file is not a review log of the expected shape; str() names the line."""


def read_fsrs_csv(path: Path) -> list[Entry]:
    """Every review of the file, oldest first, as (card, rating, time in UTC) entries."""
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise LogFormatError(f"{path}: expected the columns {', '.join(COLUMNS)}, got {reader.fieldnames}")
        entries = []
        for line, row in enumerate(reader, start=2):
            try:
                rating = int(row["review_rating"])
                at = datetime.fromisoformat(row["review_time"])
                if not 1 <= rating <= 4 or at.tzinfo is None:
                    raise ValueError("rating must be 1-4 and the time must carry an offset")
                entries.append(Entry(int(row["card_id"]), rating, at.astimezone(UTC)))
            except (TypeError, ValueError) as exc:
                raise LogFormatError(f"{path}, line {line}: {exc}") from None
    return sorted(entries, key=lambda e: e.at)
