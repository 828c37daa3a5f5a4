"""backup_db and restore_db on the test database: PostgreSQL (pg_dump/pg_restore) in CI, SQLite locally."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from quizzes.models import Card
from tutor.review.models import CardState, ReviewLog
from tutor.review.services import submit_review, undo_last_review

pytestmark = pytest.mark.django_db(transaction=True)  # the backup tools see committed rows only


def review_log() -> list[tuple]:
    return list(
        ReviewLog.objects.order_by("pk").values_list(
            "pk",
            "user__username",
            "card__slug",
            "rating",
            "reviewed_at",
            "idempotency_key",
            "undone_at",
            "state_before",
        )
    )


def test_a_backup_restored_after_a_loss_has_every_review_and_states_that_match_the_log(
    learner, other_learner, shipped_course, tmp_path
):
    cards = list(Card.objects.filter(retired=False).order_by("pk")[:6])
    for user in (learner, other_learner):
        for i, card in enumerate(cards):
            submit_review(user=user, card_id=card.pk, rating=1 + i % 4, idempotency_key=f"{user.pk}-{i}")
    undo_last_review(user=learner)
    before = review_log()
    states = sorted(CardState.objects.values_list("user_id", "card_id", "reps", "due"))
    backup = tmp_path / "tilewise.backup"
    out = StringIO()
    call_command("backup_db", str(backup), stdout=out)
    assert backup.stat().st_size > 0 and "backed up to" in out.getvalue()

    submit_review(user=learner, card_id=cards[0].pk, rating=3, idempotency_key="after-the-backup")
    other_learner.delete()  # a learner's whole history lost, as a bad migration or a mistaken delete would
    assert len(review_log()) == len(before) - len(cards) + 1

    call_command("restore_db", str(backup), stdout=StringIO())
    assert review_log() == before
    assert sorted(CardState.objects.values_list("user_id", "card_id", "reps", "due")) == states
    check = StringIO()
    call_command("rebuild_card_states", "--check", stdout=check)
    assert "every card state matches its review log" in check.getvalue()


def test_restoring_a_file_that_is_not_a_backup_says_so_and_changes_nothing(learner, shipped_course, tmp_path):
    card = Card.objects.filter(retired=False).first()
    submit_review(user=learner, card_id=card.pk, rating=3, idempotency_key="kept")
    junk = tmp_path / "junk.backup"
    junk.write_bytes(b"not a backup at all\n" * 100)
    with pytest.raises(CommandError):
        call_command("restore_db", str(junk))
    with pytest.raises(CommandError, match="No backup file"):
        call_command("restore_db", str(tmp_path / "missing.backup"))
    assert ReviewLog.objects.filter(user=learner, idempotency_key="kept").exists()
