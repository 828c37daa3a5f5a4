from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from quizzes.course_files import CourseLoadError
from quizzes.services import load_course


class Command(BaseCommand):
    help = (
        "Load a course folder (course.yaml, sections/, cards/, explanations/) into the database. "
        "Idempotent: ids are stable, re-loading updates text and adds cards, and never deletes history. "
        "All or nothing: a file with an error loads nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="the course folder, e.g. quizzes/content/cuda-kernels-fusion")

    def handle(self, *args, path: Path, **options):
        try:
            report = load_course(path)
        except CourseLoadError as exc:
            raise CommandError(f"nothing was loaded from {path}:\n{exc}") from None
        self.stdout.write(report.summary())
