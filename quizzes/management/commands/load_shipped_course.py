from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from quizzes.course_files import CourseLoadError
from quizzes.services import load_course

CONTENT_DIR = Path(__file__).resolve().parents[2] / "content"


class Command(BaseCommand):
    help = (
        "Load every course shipped in quizzes/content/ (idempotent; `make run` calls it), then encode each "
        "course's explanation wordings for the teacher, so that the first learner question does not wait for it."
    )

    def handle(self, *args, **options):
        from tutor.teacher.warm_up import encode_wordings

        folders = sorted(p.parent for p in CONTENT_DIR.glob("*/course.yaml"))
        for folder in folders:
            try:
                report = load_course(folder)
            except CourseLoadError as exc:
                raise CommandError(f"nothing was loaded from {folder}:\n{exc}") from None
            self.stdout.write(report.summary())
            self.stdout.write(encode_wordings(report.course))
