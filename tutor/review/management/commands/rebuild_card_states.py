from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from tutor.review.models import ReviewLog
from tutor.review.services import rebuild_learner, state_differences


class Command(BaseCommand):
    help = (
        "Re-derive every learner's card states from the append-only review log. "
        "With --check, only report where the live states differ from the log (exit 1 if any)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--user", help="only this username")
        parser.add_argument("--check", action="store_true", help="compare, change nothing")

    def handle(self, *args, user: str | None, check: bool, **options):
        User = get_user_model()
        users = User.objects.filter(pk__in=ReviewLog.objects.values("user"))
        if user:
            users = User.objects.filter(username=user)
            if not users.exists():
                raise CommandError(f"no user named {user!r}")
        differing = 0
        for learner in users.order_by("pk"):
            if check:
                problems = state_differences(learner)
                differing += bool(problems)
                for line in problems[:20]:
                    self.stdout.write(f"{learner.username}: {line}")
            else:
                count = rebuild_learner(learner)
                self.stdout.write(f"{learner.username}: rebuilt {count} card states from the log")
        if check:
            if differing:
                raise CommandError(f"{differing} learners have states that differ from their review log")
            self.stdout.write("every card state matches its review log")
