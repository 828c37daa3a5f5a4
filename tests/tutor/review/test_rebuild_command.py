import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from quizzes.models import Card
from tutor.review.models import CardState
from tutor.review.services import submit_review

pytestmark = pytest.mark.django_db


def test_check_passes_then_detects_a_tampered_state_and_rebuild_repairs_it(learner, shipped_course, capsys):
    for i, card in enumerate(Card.objects.order_by("pk")[:5]):
        submit_review(
            user=learner,
            card_id=card.pk,
            rating=3,
            idempotency_key=uuid.uuid4().hex,
            reviewed_at=timezone.now() - timedelta(days=3, minutes=i),
        )
    call_command("rebuild_card_states", "--check")
    assert "every card state matches" in capsys.readouterr().out
    CardState.objects.filter(user=learner).update(stability=999.0)
    with pytest.raises(CommandError, match="1 learners have states that differ"):
        call_command("rebuild_card_states", "--check")
    call_command("rebuild_card_states")
    call_command("rebuild_card_states", "--check")
    assert CardState.objects.filter(user=learner, stability=999.0).count() == 0
