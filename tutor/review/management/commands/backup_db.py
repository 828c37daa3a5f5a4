from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from tutor.backups import backup_database
from tutor.errors import DomainError


class Command(BaseCommand):
    help = (
        "Back up the whole database to one file while the service runs: pg_dump's custom format for "
        "PostgreSQL, SQLite's online backup API for SQLite. Restore it with restore_db."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="the backup file to write, e.g. backups/tilewise-2026-11-24.dump")

    def handle(self, *args, path: Path, **options):
        try:
            self.stdout.write(backup_database(path))
        except DomainError as exc:
            raise CommandError(exc.message) from None
