"""Should fitted FSRS parameters replace the ones in use? Judged on reviews the fit never saw.

Three parameter sets predict the same held-out reviews: the fitted ones, the ones in use and FSRS's
defaults. Each review's prediction is scored by log loss; the fit is adopted only when it beats both
others by a margin that is significant on the paired per-review differences:

    for other in (current, defaults):
        d_i = loss_i(other) - loss_i(fitted)          (positive: the fit predicted review i better)
        mean(d) - 1.645 * SE(d) > 0                   (one-sided 95% lower bound above zero)

SE is clustered by card: reviews of one card share a memory state, so they are not independent, and
treating them as if they were makes small gains look significant; with fewer than MIN_CARDS cards no
gain counts as significant. A fit that only ties, or wins by
less than its own noise, is not adopted. RMSE(bins) and AUC are reported beside log loss so that a
person can see calibration and discrimination too; they do not decide.

Pure functions over (sequence id, rating, time) entries: no Django, so the benchmark can replay a
public log through exactly the rule the service applies.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime

import fsrs

HOLDOUT_FRACTION = 0.2  # the most recent share of reviews, held out of the fit and judged on
Z_ONE_SIDED_95 = 1.645
MIN_CARDS = 10  # a clustered standard error over fewer cards is itself too noisy to lean on
RMSE_BINS = 20
RULE = (
    "Adopted only if the fitted parameters' log loss on your held-out reviews is lower than both the parameters "
    "in use and the FSRS defaults, and each improvement's one-sided 95% lower bound (mean − 1.645 × standard "
    "error, clustered by card, over at least 10 cards) is above zero."
)


@dataclass(frozen=True)
class Entry:
    sequence: int  # one card direction
    rating: int
    at: datetime


@dataclass(frozen=True)
class Metrics:
    log_loss: float
    rmse_bins: float
    auc: float | None  # None when the held-out reviews are all recalled (or all forgotten)
    n: int


@dataclass(frozen=True)
class Comparison:
    mean_gain: float  # mean per-review log-loss improvement of the fit over the other set
    standard_error: float
    lower_bound: float
    significant: bool


@dataclass(frozen=True)
class Verdict:
    adopt: bool
    evaluated: int
    metrics: dict[str, Metrics]  # "fitted", "current", "defaults"
    vs_current: Comparison
    vs_defaults: Comparison
    defaults_over_current: Comparison  # positive and significant: the parameters in use have gone stale

    def as_dict(self) -> dict:
        return {
            "adopt": self.adopt,
            "evaluated": self.evaluated,
            "metrics": {name: asdict(m) for name, m in self.metrics.items()},
            "vs_current": asdict(self.vs_current),
            "vs_defaults": asdict(self.vs_defaults),
            "defaults_over_current": asdict(self.defaults_over_current),
            "rule": RULE,
        }


def holdout_predictions(
    scheduler: fsrs.Scheduler, entries: Iterable[Entry], cutoff: datetime
) -> list[tuple[int, float, int]]:
    """(sequence, predicted recall, recalled 0/1) for each review at or after `cutoff`.

    Every review, before and after the cutoff, advances its card, so each prediction uses all the history
    before it; only reviews a day or more after the previous one are scored, as in FSRS's own evaluation.
    """
    cards: dict[int, fsrs.Card] = {}
    out = []
    for e in entries:
        card = cards.get(e.sequence) or fsrs.Card(card_id=e.sequence, due=e.at)
        if e.at >= cutoff and card.last_review is not None and (e.at - card.last_review).days >= 1:
            p = min(max(scheduler.get_card_retrievability(card, e.at), 1e-6), 1 - 1e-6)
            out.append((e.sequence, p, 1 if e.rating > 1 else 0))
        cards[e.sequence], _ = scheduler.review_card(card, fsrs.Rating(e.rating), e.at)
    return out


def log_losses(predictions: Sequence[tuple[int, float, int]]) -> list[float]:
    return [-(y * math.log(p) + (1 - y) * math.log(1 - p)) for _, p, y in predictions]


def rmse_bins(predictions: Sequence[tuple[int, float, int]], bins: int = RMSE_BINS) -> float:
    """Calibration: predictions grouped into equal-width bins of predicted recall; the RMSE between each bin's
    mean prediction and its actual recall rate, weighted by the bin's size."""
    groups: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for _, p, y in predictions:
        groups[min(bins - 1, int(p * bins))].append((p, y))
    total = sum(len(g) for g in groups.values())
    if not total:
        return float("nan")
    square = sum(len(g) * (sum(p for p, _ in g) / len(g) - sum(y for _, y in g) / len(g)) ** 2 for g in groups.values())
    return math.sqrt(square / total)


def auc(predictions: Sequence[tuple[int, float, int]]) -> float | None:
    """Discrimination: the chance that a recalled review was given a higher prediction than a forgotten one
    (Mann-Whitney, ties count half)."""
    ordered = sorted(predictions, key=lambda t: t[1])
    positives = sum(y for _, _, y in ordered)
    negatives = len(ordered) - positives
    if not positives or not negatives:
        return None
    rank_sum, i = 0.0, 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[j][1] == ordered[i][1]:
            j += 1
        mid_rank = (i + 1 + j) / 2  # ranks i+1 .. j share their mean
        rank_sum += mid_rank * sum(y for _, _, y in ordered[i:j])
        i = j
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def metrics(predictions: Sequence[tuple[int, float, int]]) -> Metrics:
    losses = log_losses(predictions)
    return Metrics(
        log_loss=sum(losses) / len(losses) if losses else float("nan"),
        rmse_bins=rmse_bins(predictions),
        auc=auc(predictions),
        n=len(losses),
    )


def compare(fitted: Sequence[tuple[int, float, int]], other: Sequence[tuple[int, float, int]]) -> Comparison:
    """The fit's per-review log-loss gain over `other` on the same reviews, with a card-clustered standard error."""
    gains = [b - a for a, b in zip(log_losses(fitted), log_losses(other), strict=True)]
    n = len(gains)
    if not n:
        return Comparison(
            mean_gain=float("nan"), standard_error=float("nan"), lower_bound=float("nan"), significant=False
        )
    mean = sum(gains) / n
    per_card: dict[int, float] = defaultdict(float)
    for (sequence, _, _), gain in zip(fitted, gains, strict=True):
        per_card[sequence] += gain - mean
    clusters = len(per_card)
    correction = clusters / (clusters - 1) if clusters > 1 else 1.0
    se = math.sqrt(correction * sum(s * s for s in per_card.values())) / n
    lower = mean - Z_ONE_SIDED_95 * se
    return Comparison(
        mean_gain=mean, standard_error=se, lower_bound=lower, significant=lower > 0 and clusters >= MIN_CARDS
    )


def fit_parameters(entries: list[Entry], cutoff: datetime) -> list[float]:
    """FSRS parameters fitted (fsrs's optimizer, torch) on the reviews before `cutoff` only."""
    train = [
        fsrs.ReviewLog(card_id=e.sequence, rating=fsrs.Rating(e.rating), review_datetime=e.at, review_duration=None)
        for e in entries
        if e.at < cutoff
    ]
    return list(fsrs.Optimizer(train).compute_optimal_parameters())


def holdout_cutoff(entries: list[Entry]) -> datetime:
    """The time from which the most recent HOLDOUT_FRACTION of reviews are held out of the fit."""
    return entries[int(len(entries) * (1 - HOLDOUT_FRACTION))].at


def judge(
    entries: Sequence[Entry],
    cutoff: datetime,
    *,
    fitted: fsrs.Scheduler,
    current: fsrs.Scheduler,
    defaults: fsrs.Scheduler,
) -> Verdict:
    """Score all three parameter sets on the reviews from `cutoff` on, and decide by the rule above."""
    predictions = {
        name: holdout_predictions(scheduler, entries, cutoff)
        for name, scheduler in (("fitted", fitted), ("current", current), ("defaults", defaults))
    }
    vs_current = compare(predictions["fitted"], predictions["current"])
    vs_defaults = compare(predictions["fitted"], predictions["defaults"])
    return Verdict(
        adopt=vs_current.significant and vs_defaults.significant,
        evaluated=len(predictions["fitted"]),
        metrics={name: metrics(p) for name, p in predictions.items()},
        vs_current=vs_current,
        vs_defaults=vs_defaults,
        defaults_over_current=compare(predictions["defaults"], predictions["current"]),
    )
