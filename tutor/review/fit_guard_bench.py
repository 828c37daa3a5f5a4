"""The fit guard on a real learner's history: what it decides at 30-90% of a log, and how it turns out.

    python -m tutor.review.fit_guard_bench --csv review_logs_josh.csv      # py-fsrs's public test log

At each checkpoint the log is cut there, as if the learner pressed "Fit my parameters" that day: the
fit uses the first 80% of the reviews so far and the guard judges it on the last 20%
(tutor.review.fit_guard), against the parameters then in use (the defaults until a fit is adopted) and
the defaults. Then the reviews that follow, up to the next checkpoint, say how the decision turned out:
log loss of the parameters in use after the decision, of the defaults and of the fit, on those reviews.
Torch is needed (fsrs's optimizer); nothing here touches the database.
"""

from __future__ import annotations

import argparse
import platform
import time
from importlib.metadata import version
from pathlib import Path

import fsrs

from tutor.review.fit_guard import RULE, compare, fit_parameters, holdout_cutoff, holdout_predictions, judge, metrics
from tutor.review.public_logs import read_fsrs_csv

CHECKPOINTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def _scheduler(parameters) -> fsrs.Scheduler:
    return fsrs.Scheduler(parameters=tuple(parameters), enable_fuzzing=False)


def replay(path: Path, checkpoints=CHECKPOINTS) -> list[dict]:
    entries = read_fsrs_csv(path)
    defaults = list(fsrs.scheduler.DEFAULT_PARAMETERS)
    in_use = defaults
    rows = []
    for n, point in enumerate(checkpoints):
        cut = int(len(entries) * point)
        seen = entries[:cut]
        cutoff = holdout_cutoff(seen)
        t0 = time.perf_counter()
        fitted = fit_parameters(seen, cutoff)
        fit_s = time.perf_counter() - t0
        verdict = judge(
            seen, cutoff, fitted=_scheduler(fitted), current=_scheduler(in_use), defaults=_scheduler(defaults)
        )
        before = in_use
        if verdict.adopt:
            in_use = fitted
        end = int(len(entries) * checkpoints[n + 1]) if n + 1 < len(checkpoints) else len(entries)
        following = entries[:end]
        after_cut = entries[cut].at
        preds = {
            name: holdout_predictions(_scheduler(p), following, after_cut)
            for name, p in (("in_use", in_use), ("defaults", defaults), ("fitted", fitted), ("before", before))
        }
        rows.append(
            {
                "checkpoint": point,
                "reviews": cut,
                "fit_seconds": fit_s,
                "verdict": verdict,
                "following": {name: metrics(p) for name, p in preds.items()},
                "fit_vs_defaults_after": compare(preds["fitted"], preds["defaults"]),
                "fit_vs_before_after": compare(preds["fitted"], preds["before"]),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tutor.review.fit_guard_bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--csv", type=Path, required=True, help="a review log in py-fsrs's CSV format")
    args = parser.parse_args()
    rows = replay(args.csv)
    total = len(read_fsrs_csv(args.csv))
    print(
        f"{args.csv.name}: {total:,} reviews; fsrs {version('fsrs')}, torch {version('torch')}, "
        f"Python {platform.python_version()}, {platform.machine()}"
    )
    print(f"rule: {RULE}")
    print(
        "checkpoint reviews | held-out: gain vs in use (95% lower) | gain vs defaults (95% lower) | adopted"
        " | following reviews: n, log loss in use after / defaults / fit; fit's gain over defaults (95% lower)"
    )
    for r in rows:
        v, f = r["verdict"], r["following"]
        after = r["fit_vs_defaults_after"]
        print(
            f"{r['checkpoint']:>5.0%} {r['reviews']:>7,} | "
            f"{v.vs_current.mean_gain:+.4f} ({v.vs_current.lower_bound:+.4f})"
            f" | {v.vs_defaults.mean_gain:+.4f} ({v.vs_defaults.lower_bound:+.4f}) | {'yes' if v.adopt else 'no ':>3}"
            f" | {f['in_use'].n:>5} {f['in_use'].log_loss:.4f} / {f['defaults'].log_loss:.4f} / "
            f"{f['fitted'].log_loss:.4f}; {after.mean_gain:+.4f} ({after.lower_bound:+.4f}) "
            f"[fit {r['fit_seconds']:.0f} s]"
        )


if __name__ == "__main__":
    main()
