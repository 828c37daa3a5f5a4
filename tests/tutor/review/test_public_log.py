"""A real learner's public review log (py-fsrs's test data, MIT) read and replayed through the fit guard."""

from datetime import UTC
from pathlib import Path

import fsrs
import pytest

from tutor.review.fit_guard import fit_parameters, holdout_cutoff, judge
from tutor.review.public_logs import LogFormatError, read_fsrs_csv

LOG = Path(__file__).resolve().parents[2] / "data" / "fsrs" / "review_logs_josh.csv"


def test_the_public_log_reads_as_12580_reviews_of_1205_cards_in_time_order():
    entries = read_fsrs_csv(LOG)
    assert len(entries) == 12_580 and len({e.sequence for e in entries}) == 1_205
    assert all(e.at.tzinfo is UTC for e in entries)
    assert all(a.at <= b.at for a, b in zip(entries, entries[1:], strict=False))


def test_a_malformed_log_is_refused_naming_the_line(tmp_path):
    bad = tmp_path / "log.csv"
    bad.write_text("card_id,review_rating,review_time,review_duration\n1,3,2024-03-29T20:32:32+00:00,1\n2,5,x,1\n")
    with pytest.raises(LogFormatError, match="line 3"):
        read_fsrs_csv(bad)
    bad.write_text("id,rating\n1,3\n")
    with pytest.raises(LogFormatError, match="expected the columns"):
        read_fsrs_csv(bad)


def test_on_the_real_log_a_fit_that_only_looks_better_is_not_adopted():
    """At 70% of this log a fresh fit predicts the held-out reviews a little better than the defaults (the old
    rule, any positive difference, adopted it), but by less than the comparison's own noise: kept out."""
    entries = read_fsrs_csv(LOG)
    defaults = fsrs.Scheduler(enable_fuzzing=False)
    seen = entries[: int(len(entries) * 0.7)]
    cutoff = holdout_cutoff(seen)
    fitted = fsrs.Scheduler(parameters=fit_parameters(seen, cutoff), enable_fuzzing=False)
    verdict = judge(seen, cutoff, fitted=fitted, current=defaults, defaults=defaults)
    assert verdict.evaluated > 500
    assert verdict.metrics["fitted"].log_loss < verdict.metrics["defaults"].log_loss  # the old rule adopted this
    assert verdict.vs_defaults.mean_gain > 0 and verdict.vs_defaults.lower_bound < 0 and not verdict.adopt
