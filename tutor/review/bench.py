"""Review benchmarks.

`python -m tutor.review.bench latency [--learners 1000 --reviews 1000]`: seeds a scratch database
(DATABASE_URL, PostgreSQL for the figures that count) with a real FSRS history per learner,
then times fetching a learner's queue and submitting a review when the review log holds about
1k rows, and again at about 1M rows, for the same learner.
It refuses to run on a database that already has reviews: point DATABASE_URL at a scratch one.

`python -m tutor.review.bench load`: a class of learners through the real server (tutor/review/load_bench.py).
"""

from __future__ import annotations

import argparse
import io
import platform
import random
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

from tutor.startup import load_settings_or_exit


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _time(fn, repeats: int) -> dict[str, float]:
    for _ in range(5):  # warm caches and the connection
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return {"median_ms": statistics.median(samples), "p95_ms": _percentile(samples, 0.95), "n": repeats}


def seed_learners(first: int, count: int, reviews_per_learner: int, cards: list, now: datetime, seed: int) -> int:
    """Simulate each learner's history through fsrs and bulk-load the log and the states."""
    import fsrs
    from django.contrib.auth import get_user_model
    from django.db import connection

    User = get_user_model()
    scheduler = fsrs.Scheduler(enable_fuzzing=False, maximum_interval=3650)
    rng = random.Random(seed)
    users = User.objects.bulk_create([User(username=f"bench{first + i}", password="!") for i in range(count)])
    log_buf, state_buf = io.StringIO(), io.StringIO()
    rows = 0
    for user in users:
        per_card = max(1, -(-reviews_per_learner // len(cards)))  # ceil: at least the asked-for reviews
        for card in cards:
            c = fsrs.Card(card_id=card.pk)
            # Start far enough back that a history of per_card reviews fits before today.
            at = now - timedelta(days=rng.uniform(300, 1200))
            reps = lapses = 0
            for _ in range(per_card):
                if at > now:
                    break
                rating = fsrs.Rating.Again if rng.random() < 0.12 else fsrs.Rating.Good
                was_review = c.state == fsrs.State.Review
                state_before = int(c.state) if c.last_review else 0
                c, _ = scheduler.review_card(c, rating, at)
                reps += 1
                lapses += int(was_review and rating == fsrs.Rating.Again)
                log_buf.write(
                    f"{user.pk}\t{card.pk}\tf\t{int(rating)}\t{at.isoformat()}\t{rng.randint(2000, 20000)}\t"
                    f"\t\\N\t{state_before}\t{uuid.uuid4().hex}\t\\N\t\\N\t{at.isoformat()}\n"
                )
                rows += 1
                at = max(c.due, at + timedelta(minutes=1))
            state_buf.write(
                f"{user.pk}\t{card.pk}\tf\t{int(c.state)}\t{'' if c.step is None else c.step}\t"
                f"{c.stability}\t{c.difficulty}\t{c.due.isoformat()}\t{c.last_review.isoformat()}\t"
                f"{reps}\t{lapses}\t1\n".replace("\t\t", "\t\\N\t")
            )
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(
            "COPY tutor_reviewlog (user_id, card_id, reverse, rating, reviewed_at, duration_ms, "
            "answer, answer_correct, state_before, idempotency_key, session_id, undone_at, created_at) "
            "FROM STDIN"
        ) as cp:
            cp.write(log_buf.getvalue())
        with raw.copy(
            "COPY tutor_cardstate (user_id, card_id, reverse, state, step, stability, difficulty, due, "
            "last_review, reps, lapses, version) FROM STDIN"
        ) as cp:
            cp.write(state_buf.getvalue())
        cursor.execute("ANALYZE tutor_reviewlog; ANALYZE tutor_cardstate;")
    return rows


def measure(user, cards: list, repeats: int) -> dict[str, dict[str, float]]:
    from tutor.review.queue import today_queue
    from tutor.review.services import submit_review

    queue = _time(lambda: today_queue(user), repeats)
    pool = iter(cards * (repeats // len(cards) + 2))

    def submit() -> None:
        submit_review(user=user, card_id=next(pool).pk, rating=3, idempotency_key=uuid.uuid4().hex)

    return {"queue": queue, "submit": _time(submit, repeats)}


def review_bench(learners: int, reviews: int, repeats: int) -> None:
    import django
    from django.core.management import call_command
    from django.db import connection

    django.setup()
    from quizzes.models import Card
    from tutor.review.models import ReviewLog

    if connection.vendor != "postgresql":
        print("note: not PostgreSQL; the figures that count are taken on PostgreSQL (COPY is used to seed).")
        raise SystemExit(2)
    call_command("migrate", verbosity=0)
    call_command("load_shipped_course", verbosity=0, stdout=io.StringIO())
    if ReviewLog.objects.exists():
        raise SystemExit("this database already has reviews: point DATABASE_URL at a scratch database")
    cards = list(Card.objects.filter(retired=False).order_by("pk"))
    now = datetime.now(UTC)
    t0 = time.perf_counter()
    seed_learners(0, 1, reviews, cards, now, seed=1)
    small_rows = ReviewLog.objects.count()
    from django.contrib.auth import get_user_model

    probe = get_user_model().objects.get(username="bench0")
    small = measure(probe, cards, repeats)
    batch = 100
    for start in range(1, learners, batch):
        seed_learners(start, min(batch, learners - start), reviews, cards, now, seed=start)
    large_rows = ReviewLog.objects.count()
    seed_s = time.perf_counter() - t0
    large = measure(probe, cards, repeats)
    others = [
        measure(get_user_model().objects.get(username=f"bench{i}"), cards, repeats // 4)
        for i in (learners // 3, 2 * learners // 3)
    ]

    print(
        f"device: {platform.processor() or platform.machine()}, {connection.vendor} "
        f"{connection.pg_version // 10000}, Python {platform.python_version()}"
    )
    print(
        f"method: service calls in-process (tutor.review.queue.today_queue, tutor.review.services.submit_review), "
        f"{repeats} timed calls after 5 warm-up calls, perf_counter; median and p95"
    )
    print(
        f"seeded {large_rows:,} review-log rows for {learners} learners in {seed_s:.0f} s "
        f"(FSRS-simulated histories over {len(cards)} cards)"
    )
    print(f"{'':22}{'queue median':>14}{'queue p95':>11}{'submit median':>15}{'submit p95':>12}")
    rows = [(f"{small_rows:,} rows (learner 0)", small), (f"{large_rows:,} rows (learner 0)", large)]
    rows += [(f"{large_rows:,} rows (other)", o) for o in others]
    for label, m in rows:
        print(
            f"{label:22}{m['queue']['median_ms']:>12.2f}ms{m['queue']['p95_ms']:>9.2f}ms"
            f"{m['submit']['median_ms']:>13.2f}ms{m['submit']['p95_ms']:>10.2f}ms"
        )
    print(
        f"queue cost growth from {small_rows:,} to {large_rows:,} rows: "
        f"{large['queue']['median_ms'] / small['queue']['median_ms']:.2f}x (target <= 2x); "
        f"submit: {large['submit']['median_ms'] / small['submit']['median_ms']:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tutor.review.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="what", required=True)
    review = sub.add_parser("latency", help="queue and submit latency at 1k and 1M review-log rows")
    review.add_argument("--learners", type=int, default=1000)
    review.add_argument("--reviews", type=int, default=1000, help="reviews per learner")
    review.add_argument("--repeats", type=int, default=200)
    load = sub.add_parser(
        "load",
        help="a class reviewing at once through the real server: p50/p95/p99 and errors at 10, 50, 100 learners "
        "with think time and back to back (see tutor/review/load_bench.py)",
    )
    load.add_argument("--url", help="a server already running on DATABASE_URL's database (loopback only)")
    load.add_argument("--levels", default="10,50,100", help="learner counts with think time")
    load.add_argument("--back-to-back", default="10,20", help="learner counts without think time ('': none)")
    load.add_argument("--duration", type=float, default=30.0, help="seconds per phase")
    args = parser.parse_args()
    if args.what == "load":  # reads the settings itself: without DATABASE_URL it makes a scratch SQLite first
        from tutor.review.load_bench import load_bench

        def counts(text: str) -> tuple[int, ...]:
            return tuple(int(n) for n in text.split(",") if n.strip())

        load_bench(
            url=args.url, levels=counts(args.levels), back_to_back=counts(args.back_to_back), duration=args.duration
        )
        return
    load_settings_or_exit()
    if args.what == "latency":
        review_bench(args.learners, args.reviews, args.repeats)


if __name__ == "__main__":
    main()
