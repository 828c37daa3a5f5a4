from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from quizzes.course_files import write_course_dir
from quizzes.exporters import course_to_csv, course_to_data, export_apkg
from quizzes.models import Course


class Command(BaseCommand):
    help = (
        "Export a course from the database: --format files writes the course folder in the "
        "same format load_course reads (admin edits included), csv writes one row per card, "
        "apkg writes an Anki package."
    )

    def add_arguments(self, parser):
        parser.add_argument("course", help="course id, e.g. cuda-kernels-fusion")
        parser.add_argument("--out", type=Path, required=True, help="folder (files) or file path (csv, apkg)")
        parser.add_argument("--format", choices=["files", "csv", "apkg"], default="files")

    def handle(self, *args, course: str, out: Path, format: str, **options):
        obj = Course.objects.filter(slug=course).first()
        if obj is None:
            known = ", ".join(Course.objects.values_list("slug", flat=True)) or "none loaded"
            raise CommandError(f"unknown course {course!r} (known: {known})")
        if format == "files":
            written = write_course_dir(course_to_data(obj), out)
            self.stdout.write(f"wrote {len(written)} files to {out}")
        elif format == "csv":
            out.write_text(course_to_csv(obj), encoding="utf-8")
            self.stdout.write(f"wrote {obj.cards.count()} cards to {out}")
        else:
            count = export_apkg(obj, out)
            self.stdout.write(f"wrote {count} notes to {out}")
