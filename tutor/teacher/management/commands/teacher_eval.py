from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.test.utils import override_settings

from quizzes.models import Course
from tutor.teacher import llm
from tutor.teacher.evaluation import SPLITS, evaluate, load_items, summarize


class Command(BaseCommand):
    help = (
        "Ask the teacher every question of an evaluation set in the configured mode (course notes, or the "
        "OpenAI-compatible server at LLM_BASE_URL), then print each answer for a person to read and the "
        "automatic checks: required facts present, forbidden claims absent, the right first citation, "
        "off-topic and injection questions declined, latency."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--split",
            choices=[*SPLITS, "all"],
            default="test",
            help=(
                "which split to run: the teacher is tuned on 'tune' and 'dev'; 'test', 'fresh', 'holdout', "
                "'closing', 'final', 'blind', 'sealed', 'unseen', 'novel', 'probe', 'untried', 'unasked', "
                "'unheard', 'untold', 'unposed', 'unprompted', 'unspoken', 'unsaid', 'unvoiced', "
                "'unbidden', 'unstated', 'unmentioned', 'unqueried', 'unsought', 'unraised', 'unwritten', "
                "'unaired', 'unbroached', 'unheeded', 'unexplored', 'unvisited', 'unsurveyed', 'uncharted', "
                "'unmapped', 'unlisted', 'unnoted', 'unquoted' and 'unspecified' (each written before the teacher was "
                "asked them) are held out and only reported on; 'unspecified' is the newest; 'all' "
                "runs every question"
            ),
        )
        parser.add_argument("--file", help="an evaluation set (YAML) of your own; default: the shipped ones")
        parser.add_argument("--course", default="cuda-kernels-fusion", help="the course the questions are about")
        parser.add_argument("--quiet", action="store_true", help="only the failures and the summary")

    def handle(self, *args, split: str, file: str | None, course: str, quiet: bool, **options):
        target = Course.objects.filter(slug=course).first()
        if target is None:
            raise CommandError(f"no course {course!r}: load it first (manage.py load_shipped_course)")
        source = Path(file) if file else None
        if source is not None and not source.is_file():
            raise CommandError(f"no such file: {file}")
        items = load_items(source, split)
        if not items:
            raise CommandError(f"{file or 'the shipped sets'} has no questions in split {split!r}")
        with override_settings(TEACHER_MESSAGES_PER_MINUTE=10**6):  # one evaluation user asks every question
            self._run(items, split, file or "the shipped sets", target, quiet)

    def _run(self, items, split: str, source: str, target: Course, quiet: bool) -> None:
        user, _ = get_user_model().objects.get_or_create(username="teacher-eval")
        mode = f"LLM at {settings.LLM_BASE_URL} ({llm.model_name()})" if llm.llm_configured() else "course notes"
        self.stdout.write(f"{len(items)} questions ({split}) from {source}; mode: {mode}\n")
        outcomes = []
        for item in items:
            outcome = evaluate(item, user=user, course=target)
            outcomes.append(outcome)
            if quiet and outcome.ok:
                continue
            verdict = "ok" if outcome.ok else "FAIL"
            self.stdout.write(f"\n[{verdict}] {item.id} ({item.kind}) {item.question}")
            if item.previous:
                self.stdout.write(f"  after: {item.previous}")
            cites = ", ".join(c["section"] for c in outcome.citations) or "none"
            self.stdout.write(f"  expected section: {item.section}; cited: {cites}; {outcome.ms:.0f} ms")
            if outcome.missing:
                self.stdout.write(f"  missing facts: {outcome.missing}")
            if outcome.forbidden_found:
                self.stdout.write(f"  forbidden claims: {outcome.forbidden_found}")
            self.stdout.write("  " + outcome.text.replace("\n", "\n  "))
        self.stdout.write("\n" + "\n".join(summarize(outcomes).lines()))
