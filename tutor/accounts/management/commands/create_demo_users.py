from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tutor.accounts.services import ensure_user


class Command(BaseCommand):
    help = (
        "Create an admin and a demo learner for local use if they do not exist yet "
        "(existing accounts and their passwords are never changed), then print how to log in."
    )

    def add_arguments(self, parser):
        parser.add_argument("--admin-password", default="tilewise-admin")
        parser.add_argument("--learner-password", default="tilewise-demo")

    def handle(self, *args, admin_password: str, learner_password: str, **options):
        if not settings.DEBUG and admin_password == "tilewise-admin":
            raise CommandError("refusing to create the default admin password with DEBUG off: pass --admin-password")
        admin = ensure_user(username="admin", password=admin_password, staff=True)
        learner = ensure_user(username="demo", password=learner_password)
        for account, password, role in ((admin, admin_password, "admin"), (learner, learner_password, "demo learner")):
            state = "created" if account.created else "already there (password unchanged)"
            self.stdout.write(f"  {role:13} {account.username} / {password}   [{state}]")
