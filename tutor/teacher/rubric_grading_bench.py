"""Grading benchmark: how often each grader's suggested rating matches a fair tutor's.

    python -m tutor.teacher.rubric_grading_bench              # every method that can run here
    python -m tutor.teacher.rubric_grading_bench --method keyword
    python -m tutor.teacher.rubric_grading_bench --calibrate  # threshold grid for the embedding grader
    python -m tutor.teacher.rubric_grading_bench --examples tutor/teacher/grading_examples_check.yaml

The thresholds are calibrated on ``grading_examples.yaml``; ``grading_examples_check.yaml`` and
``grading_examples_check2.yaml`` were written later without running the grader and are only reported on.

No database needed: the cards are read straight from the course files
(``quizzes/content/<course>/``, the course named in ``grading_examples.yaml``) and built as
unsaved ``Card`` objects. Methods: ``embedding`` (MiniLM in numpy, no torch), ``keyword`` (always),
``llm`` (only when ``LLM_BASE_URL`` is set). When a method's own verdict does not come (the
model failed or replied with something unusable, and the keyword check stood in), the case
counts as a miss for that method and is listed with its notice.

For each method it prints how often the suggested rating is exactly the tutor's and within
±1, how often the common mistake is detected (on the answers that make it) and raised falsely
(on interview answers that do not), the agreement on which rubric points are covered, and
every case where the rating is off or the mistake verdict is wrong.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

EXAMPLES_FILE = Path(__file__).with_name("grading_examples.yaml")
CONTENT_DIR = Path(__file__).resolve().parents[2] / "quizzes" / "content"


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings")
    import django

    django.setup()


@dataclass
class Example:
    card: str
    label: str
    rating: int
    covers: list[int]
    mistake: bool
    answer: str


@dataclass
class Outcome:
    example: Example
    result: dict
    seconds: float

    @property
    def fell_back(self) -> bool:
        """The method's own verdict did not come (the model failed or its reply was unusable)."""
        return bool(self.result.get("notice"))

    @property
    def rating(self) -> int:
        """The suggested rating; 0 when a fallback stood in, so that it counts as a miss for the method."""
        return 0 if self.fell_back else int(self.result.get("suggested_rating") or 0)


@dataclass
class Score:
    method: str
    outcomes: list[Outcome] = field(default_factory=list)

    def _share(self, pred) -> tuple[int, int]:
        return sum(1 for o in self.outcomes if pred(o)), len(self.outcomes)

    @property
    def exact(self) -> tuple[int, int]:
        return self._share(lambda o: o.rating == o.example.rating)

    @property
    def within_one(self) -> tuple[int, int]:
        return self._share(lambda o: abs(o.rating - o.example.rating) <= 1)

    def mistakes(self, cards: dict) -> tuple[int, int, int, int]:
        """(detected, mistake answers, false alarms, interview answers without the mistake)."""
        made = [o for o in self.outcomes if o.example.mistake]
        clean = [o for o in self.outcomes if not o.example.mistake and cards[o.example.card].common_wrong_answer]
        return (
            sum(1 for o in made if o.result.get("common_wrong_answer")),
            len(made),
            sum(1 for o in clean if o.result.get("common_wrong_answer")),
            len(clean),
        )

    def point_agreement(self, cards: dict) -> tuple[int, int]:
        """Rubric points on which the grader's covered/missed verdict matches the tutor's (own verdicts only)."""
        from tutor.teacher.rubric_grading import rubric

        agree = total = 0
        for o in self.outcomes:
            if o.fell_back:  # the fallback's verdict is not this method's
                continue
            points = rubric(cards[o.example.card])
            covered = set(o.result.get("covered") or [])
            for i, p in enumerate(points, 1):
                total += 1
                agree += (p in covered) == (i in o.example.covers)
        return agree, total


def load_examples(path: Path = EXAMPLES_FILE) -> tuple[str, list[Example]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    examples = [
        Example(
            card=e["card"],
            label=e["label"],
            rating=int(e["rating"]),
            covers=list(e.get("covers") or []),
            mistake=bool(e.get("mistake")),
            answer=str(e["answer"]).strip(),
        )
        for e in data["examples"]
    ]
    return data["course"], examples


def load_cards(course: str, content_dir: Path = CONTENT_DIR) -> dict:
    """Unsaved Card objects for the interview and recall cards of a course folder, by card id."""
    from quizzes.card_kinds import KIND_FIELDS
    from quizzes.course_files import read_course_dir
    from quizzes.models import Card

    cards = {}
    for raw in read_course_dir(content_dir / course).cards:
        if raw["kind"] not in (Card.Kind.INTERVIEW, Card.Kind.RECALL):
            continue
        card = Card(slug=raw["id"], kind=raw["kind"], retired=raw.get("retired", False))
        for f in KIND_FIELDS[raw["kind"]]:
            setattr(card, f.column, raw.get(f.name))
        cards[raw["id"]] = card
    return cards


def available_methods() -> dict[str, Callable]:
    from tutor.teacher import llm
    from tutor.teacher import rubric_grading as grading

    methods: dict[str, Callable] = {}
    if grading.embeddings_unavailable_reason() is None:
        methods["embedding"] = grading.embedding_grade
    methods["keyword"] = grading.keyword_grade
    if llm.llm_configured():
        methods["llm"] = grading.llm_grade
    return methods


def run(method: str, fn: Callable, cards: dict, examples: list[Example]) -> Score:
    score = Score(method)
    for ex in examples:
        t0 = time.perf_counter()
        result = fn(cards[ex.card], ex.answer)
        score.outcomes.append(Outcome(ex, result, time.perf_counter() - t0))
    return score


def _pct(pair: tuple[int, int]) -> str:
    n, d = pair
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "n/a"


def report(scores: list[Score], cards: dict, out=sys.stdout, misses: bool = True) -> None:
    print(
        f"{'method':<10} {'exact':>12} {'within ±1':>12} {'mistake found':>14} {'false alarm':>12} "
        f"{'points agree':>14} {'fell back':>10} {'median ms':>10}",
        file=out,
    )
    for s in scores:
        det, made, false, clean = s.mistakes(cards)
        times = sorted(o.seconds for o in s.outcomes[1:] or s.outcomes)  # first call may load the model
        median_ms = 1000 * times[len(times) // 2] if times else 0.0
        print(
            f"{s.method:<10} {_pct(s.exact):>12} {_pct(s.within_one):>12} {_pct((det, made)):>14} "
            f"{_pct((false, clean)):>12} {_pct(s.point_agreement(cards)):>14} "
            f"{sum(o.fell_back for o in s.outcomes):>10} {median_ms:>10.1f}",
            file=out,
        )
    if not misses:
        return
    for s in scores:
        wrong = [
            o
            for o in s.outcomes
            if o.rating != o.example.rating or bool(o.result.get("common_wrong_answer")) != o.example.mistake
        ]
        print(f"\n{s.method}: {len(wrong)} case(s) off", file=out)
        for o in wrong:
            ex = o.example
            flag = ""
            if bool(o.result.get("common_wrong_answer")) != ex.mistake:
                flag = " mistake missed" if ex.mistake else " false mistake"
            n_points = len(o.result.get("covered") or []) + len(o.result.get("missed") or [])
            print(
                f"  {ex.card:<30} {ex.label:<8} tutor {ex.rating} got {o.rating or 'none'}{flag}; covered "
                f"{len(o.result.get('covered') or [])}/{n_points} (tutor {len(ex.covers)})"
                + (f"; notice: {o.result['notice']}" if o.result.get("notice") else ""),
                file=out,
            )


def calibrate(cards: dict, examples: list[Example], top: int = 20) -> None:
    """Grid over the embedding grader's parameters on the example set, best exact-rating accuracy first.

    Pick from the middle of a plateau rather than a lone peak: with 50 answers one case is 2 points."""
    import itertools

    from tutor.teacher import rubric_grading as grading

    reports = [(ex, grading.similarity_report(cards[ex.card], ex.answer)) for ex in examples]
    shares = (
        ((0.85, 4), (0.65, 3), (0.2, 2)),
        ((0.8, 4), (0.6, 3), (0.2, 2)),
        ((0.75, 4), (0.5, 3), (0.2, 2)),
        ((0.85, 4), (0.65, 3), (0.35, 2)),
        ((1.0, 4), (0.7, 3), (0.3, 2)),
    )
    grid = itertools.product(
        [x / 100 for x in range(40, 91, 2)],
        (0.0, 0.2, 0.3, 0.5),
        (0.5, 0.6, 1.0),
        (0.5, 0.55, 0.6, 0.65, 0.7),
        (-0.05, 0.0, 0.05),
        shares,
    )
    rows = []
    for point_thr, lex_w, floor, mistake_thr, margin, cuts in grid:
        exact = within = found = false = 0
        for ex, rep in reports:
            scores = [
                sim / max(ref, floor) + lex_w * lex
                for sim, ref, lex in zip(rep["sims"], rep["reference_sims"], rep["lexical"], strict=True)
            ]
            share = sum(x >= point_thr for x in scores) / len(scores) if scores else 0.0
            mistake = grading.makes_the_mistake(rep, mistake_thr, margin)
            rating = (2 if share >= 0.5 else 1) if mistake else next((r for f, r in cuts if share >= f), 1)
            exact += rating == ex.rating
            within += abs(rating - ex.rating) <= 1
            found += mistake and ex.mistake
            false += mistake and not ex.mistake
        rows.append((exact, within, found, false, point_thr, lex_w, floor, mistake_thr, margin, cuts))
    rows.sort(key=lambda r: (r[0], r[1], r[2] - r[3]), reverse=True)
    print(
        f"{len(rows)} settings; current: point {grading.POINT_THRESHOLD}, lexical {grading.LEXICAL_WEIGHT}, "
        f"floor {grading.REFERENCE_FLOOR}, mistake {grading.MISTAKE_THRESHOLD} "
        f"(margin {grading.MISTAKE_MARGIN}), shares {grading.RATING_SHARES}"
    )
    print("exact within found false | point lexical floor mistake margin shares")
    for r in rows[:top]:
        print(
            f"{r[0]:>5} {r[1]:>6} {r[2]:>5} {r[3]:>5} | {r[4]:.2f} {r[5]:.1f} {r[6]:.1f} {r[7]:.2f} {r[8]:.2f} {r[9]}"
        )
    current = [
        r
        for r in rows
        if (r[4], r[5], r[6], r[7], r[8], r[9])
        == (
            grading.POINT_THRESHOLD,
            grading.LEXICAL_WEIGHT,
            grading.REFERENCE_FLOOR,
            grading.MISTAKE_THRESHOLD,
            grading.MISTAKE_MARGIN,
            grading.RATING_SHARES,
        )
    ]
    if current:
        print(f"current settings rank {rows.index(current[0]) + 1}: exact {current[0][0]}, within ±1 {current[0][1]}")
    print("\nexact accuracy by point threshold (other settings as current):")
    for r in sorted(
        (
            r
            for r in rows
            if (r[5], r[6], r[7], r[8], r[9])
            == (
                grading.LEXICAL_WEIGHT,
                grading.REFERENCE_FLOOR,
                grading.MISTAKE_THRESHOLD,
                grading.MISTAKE_MARGIN,
                grading.RATING_SHARES,
            )
        ),
        key=lambda r: r[4],
    ):
        print(f"  {r[4]:.2f} {'#' * r[0]} {r[0]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--method",
        action="append",
        choices=("embedding", "keyword", "llm"),
        help="only these methods (repeatable); default: every method that can run here",
    )
    ap.add_argument("--calibrate", action="store_true", help="print a threshold grid for the embedding grader")
    ap.add_argument("--no-misses", action="store_true", help="only the summary table")
    ap.add_argument(
        "--examples",
        type=Path,
        default=EXAMPLES_FILE,
        help="graded answers to score (default: grading_examples.yaml, the calibration set)",
    )
    args = ap.parse_args(argv)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per model request otherwise
    setup_django()
    try:
        course, examples = load_examples(args.examples)
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as exc:
        print(f"{args.examples}: not a graded-answers file ({exc})", file=sys.stderr)
        return 2
    cards = load_cards(course)
    unknown = sorted({ex.card for ex in examples} - set(cards))
    if unknown:
        print(f"examples name cards not in the course: {', '.join(unknown)}", file=sys.stderr)
        return 2
    if args.calibrate:
        calibrate(cards, examples)
        return 0
    methods = available_methods()
    from tutor.teacher import rubric_grading as grading

    for name in args.method or []:
        if name not in methods:
            why = grading.embeddings_unavailable_reason() if name == "embedding" else "LLM_BASE_URL is not set"
            print(f"{name}: cannot run here ({why})", file=sys.stderr)
    chosen = [m for m in methods if not args.method or m in args.method]
    kinds = sorted({cards[ex.card].kind for ex in examples})
    print(
        f"{len(examples)} graded answers on {len({ex.card for ex in examples})} cards ({', '.join(kinds)}) "
        f"of {course}; methods: {', '.join(chosen)}"
    )
    if "embedding" in chosen:
        print(
            f"embedding thresholds: point {grading.POINT_THRESHOLD}, mistake {grading.MISTAKE_THRESHOLD} "
            f"(margin {grading.MISTAKE_MARGIN:+}), rating by share covered {grading.RATING_SHARES}"
        )
    scores = [run(m, methods[m], cards, examples) for m in chosen]
    report(scores, cards, misses=not args.no_misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
