from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from tutor.backups import restore_database
from tutor.errors import DomainError


class Command(BaseCommand):
    help = (
        "Replace the database's content with a backup made by backup_db (same database kind). Stop the web "
        "server and workers first; afterwards run migrate, then rebuild_card_states --check."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="the backup file backup_db wrote")

    def handle(self, *args, path: Path, **options):
        try:
            self.stdout.write(restore_database(path))
        except DomainError as exc:
            raise CommandError(exc.message) from None
