from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from quizzes.course_files import CourseLoadError
from quizzes.services import load_course

CONTENT_DIR = Path(__file__).resolve().parents[2] / "content"


class Command(BaseCommand):
    help = "Load every course shipped in quizzes/content/ (idempotent; `make run` calls it)."

    def handle(self, *args, **options):
        folders = sorted(p.parent for p in CONTENT_DIR.glob("*/course.yaml"))
        for folder in folders:
            try:
                self.stdout.write(load_course(folder).summary())
            except CourseLoadError as exc:
                raise CommandError(f"nothing was loaded from {folder}:\n{exc}") from None
