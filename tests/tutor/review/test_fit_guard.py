"""The adoption rule's statistics, on hand-made predictions whose answers are known."""

import math

import pytest

from tutor.review.fit_guard import MIN_CARDS, auc, compare, rmse_bins


def _preds(values, sequences=None):
    """(sequence, predicted recall, recalled) triples; each review its own card unless told otherwise."""
    return [(sequences[i] if sequences else i, p, y) for i, (p, y) in enumerate(values)]


def test_auc_is_one_for_perfect_ranking_zero_for_reversed_and_half_for_ties():
    assert auc(_preds([(0.9, 1), (0.8, 1), (0.2, 0), (0.1, 0)])) == 1.0
    assert auc(_preds([(0.1, 1), (0.9, 0)])) == 0.0
    assert auc(_preds([(0.5, 1), (0.5, 0), (0.5, 1)])) == 0.5
    assert auc(_preds([(0.7, 1), (0.8, 1)])) is None  # nothing was forgotten: undefined


def test_rmse_bins_is_zero_when_each_bins_mean_prediction_matches_its_recall_rate():
    calibrated = [(0.25, 1), (0.25, 0), (0.25, 0), (0.25, 0), (0.75, 1), (0.75, 1), (0.75, 1), (0.75, 0)]
    assert rmse_bins(_preds(calibrated)) == pytest.approx(0.0)
    overconfident = [(0.95, 1), (0.95, 0)]  # predicts 0.95, half recalled
    assert rmse_bins(_preds(overconfident)) == pytest.approx(0.45)


def test_identical_predictions_gain_nothing_and_are_not_significant():
    preds = _preds([(0.8, 1), (0.6, 0), (0.9, 1)] * 10)
    result = compare(preds, preds)
    assert result.mean_gain == 0 and not result.significant


def test_a_consistent_gain_over_many_cards_is_significant():
    fitted = _preds([(0.9, 1), (0.1, 0)] * 20)
    other = _preds([(0.7, 1), (0.3, 0)] * 20)
    result = compare(fitted, other)
    gain = -math.log(0.7) + math.log(0.9)
    assert result.mean_gain == pytest.approx(gain) and result.significant


def test_the_same_gain_from_too_few_cards_is_not_significant():
    """Forty reviews of three cards are not forty independent pieces of evidence."""
    sequences = [i % (MIN_CARDS - 7) for i in range(40)]
    fitted = _preds([(0.9, 1), (0.1, 0)] * 20, sequences)
    other = _preds([(0.7, 1), (0.3, 0)] * 20, sequences)
    assert not compare(fitted, other).significant


def test_clustering_by_card_widens_the_error_when_a_cards_reviews_move_together():
    # Card A gains a lot on each of its 20 reviews, card B..K lose a little: per-review errors look small,
    # but the gain rests on one card.
    sequences = [0] * 20 + list(range(1, 21))
    fitted = _preds([(0.95, 1)] * 20 + [(0.6, 1)] * 20, sequences)
    other = _preds([(0.5, 1)] * 20 + [(0.62, 1)] * 20, sequences)
    clustered = compare(fitted, other)

    def one_card_each(preds):
        return [(i, p, y) for i, (_, p, y) in enumerate(preds)]

    independent = compare(one_card_each(fitted), one_card_each(other))
    assert clustered.mean_gain == pytest.approx(independent.mean_gain) and clustered.mean_gain > 0
    assert clustered.standard_error > 2 * independent.standard_error
