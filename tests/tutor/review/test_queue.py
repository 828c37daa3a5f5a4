import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from quizzes.models import Card
from tutor.review.models import CardState
from tutor.review.queue import today_queue, tomorrow_forecast
from tutor.review.services import learner_settings, submit_review

pytestmark = pytest.mark.django_db


def _review_todays_new_cards(learner, new_per_day: int) -> None:
    """Set the learner's new-card limit, then rate every card in today's queue Easy."""
    s = learner_settings(learner)
    s.new_cards_per_day = new_per_day
    s.save()
    for item in today_queue(learner).items:
        submit_review(user=learner, card_id=item.card.pk, rating=4, idempotency_key=uuid.uuid4().hex)


def test_a_new_learner_gets_new_cards_up_to_the_daily_limit(learner, shipped_course):
    s = learner_settings(learner)
    s.new_cards_per_day = 5
    s.save()
    q = today_queue(learner)
    assert q.due_count == 0 and q.new_count == 5 and len(q.items) == 5
    assert all(item.is_new for item in q.items)
    assert set(q.items[0].intervals) == {1, 2, 3, 4}


def test_new_cards_introduced_today_use_up_the_limit(learner, shipped_course):
    _review_todays_new_cards(learner, new_per_day=3)
    q = today_queue(learner)
    assert q.new_count == 0 and q.new_introduced_today == 3 and q.reviewed_today == 3


def test_due_cards_come_first_lowest_retrievability_first(learner, shipped_course):
    now = timezone.now()
    cards = list(Card.objects.order_by("pk")[:3])
    for i, card in enumerate(cards):
        # Older reviews with the same rating: lower retrievability now.
        for day in (60 - 10 * i, 59 - 10 * i, 50 - 10 * i):
            submit_review(
                user=learner,
                card_id=card.pk,
                rating=3,
                idempotency_key=uuid.uuid4().hex,
                reviewed_at=now - timedelta(days=day),
            )
    CardState.objects.filter(user=learner).update(due=now - timedelta(hours=1))
    q = today_queue(learner, now=now)
    due_items = [item for item in q.items if not item.is_new]
    assert len(due_items) == 3 and not q.items[0].is_new
    r = [item.retrievability for item in due_items]
    assert r == sorted(r)


def test_retired_cards_leave_the_queue(learner, shipped_course):
    first = today_queue(learner).items[0].card
    first.retired = True
    first.save()
    assert first.pk not in [item.card.pk for item in today_queue(learner).items]


def test_reverse_side_of_a_glossary_card_comes_after_its_front(learner, shipped_course):
    card = Card.objects.filter(reversible=True).order_by("course", "position", "pk").first()
    s = learner_settings(learner)
    s.new_cards_per_day = 500
    s.save()
    before = [(i.card.pk, i.reverse) for i in today_queue(learner, limit=500).items]
    assert (card.pk, False) in before and (card.pk, True) not in before
    submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key=uuid.uuid4().hex)
    after = [(i.card.pk, i.reverse) for i in today_queue(learner, limit=500).items]
    assert (card.pk, True) in after


def test_done_for_today_shows_tomorrows_forecast(learner, shipped_course):
    _review_todays_new_cards(learner, new_per_day=2)
    q = today_queue(learner)
    assert q.items == []
    CardState.objects.filter(user=learner).update(due=timezone.now() + timedelta(days=1))
    assert tomorrow_forecast(learner) == 2


def test_with_hundreds_due_the_lowest_recall_cards_of_the_whole_deck_come_first(learner, shipped_course):
    """The queue ranks every due card, not a window of the earliest due: with 400 due cards whose due
    dates do not follow their recall, the first 20 are exactly fsrs's 20 lowest-recall cards."""
    import random

    from tutor.review.models import State
    from tutor.review.scheduling import retrievability, scheduler_for

    template = Card.objects.filter(kind="recall").first()
    extra = [
        Card(
            course=shipped_course,
            slug=f"extra-{i}",
            kind="recall",
            prompt=f"Extra {i}?",
            answer="Yes.",
            position=10_000 + i,
        )
        for i in range(400 - Card.objects.count())
    ]
    Card.objects.bulk_create(extra)
    assert template is not None and Card.objects.count() >= 400
    now = timezone.now()
    rng = random.Random(5)
    states = []
    for card in Card.objects.all()[:400]:
        last = now - timedelta(days=rng.uniform(1, 400), seconds=rng.randint(0, 86399))
        states.append(
            CardState(
                user=learner,
                card=card,
                reverse=False,
                state=State.REVIEW,
                step=None,
                stability=rng.uniform(0.5, 300),
                difficulty=5.0,
                last_review=last,
                # due dates unrelated to recall: the oldest due are not the most forgotten
                due=now - timedelta(hours=rng.uniform(1, 20)),
                reps=3,
                lapses=0,
                version=1,
            )
        )
    CardState.objects.bulk_create(states)
    scheduler = scheduler_for(learner_settings(learner))
    expected = sorted(CardState.objects.filter(user=learner), key=lambda s: (retrievability(scheduler, s, now), s.due))
    q = today_queue(learner, now=now, limit=20)
    assert q.due_count == 400
    assert [item.card.pk for item in q.items] == [s.card_id for s in expected[:20]]
    recalls = [item.retrievability for item in q.items]
    assert recalls == sorted(recalls) and recalls[0] == min(retrievability(scheduler, s, now) for s in expected)
