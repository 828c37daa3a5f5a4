"""End-to-end check of lab nodes: a broker, real Celery workers on the gpu queue, requests made through
labs.services, outcomes read back from the database (labs/e2e.py does the work)."""

from __future__ import annotations

import tempfile
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from labs.e2e import E2EError, Fleet, batch_plan, device_key, health_lists, overlaps, run_batch
from labs.experiments.catalog import CATALOG
from labs.models import LabRun

# --quick: small, fast parameters, so that the whole check runs in seconds on a CPU (CI).
QUICK_EXPERIMENTS = "flash_tiling_trace,launch_overhead"
QUICK_PARAMS = {
    "flash_tiling_trace": {"seq_len": 256, "block_m": 16, "block_n": 16},
    "launch_overhead": {"lengths": "10,50", "hidden": 256},
    "fused_vs_unfused": {"sizes": "64x1024", "chains": "swiglu", "variants": "eager"},
    "attention": {"seq_lens": "128", "variants": "naive,sdpa_math"},
    "roofline": {"matmul_size": 256},
}
WARM_TARGET_S = 20.0
BATCH_TARGET_RATIO = 0.55


class Command(BaseCommand):
    help = (
        "Check lab nodes end to end. By default: start one Celery worker on the gpu queue (and an embedded "
        "Redis unless REDIS_URL is set), request each default experiment through labs.services as a test "
        "learner, one at a time, and print how long each took from request to done. --workers N: start N "
        "workers, one per GPU (CUDA_VISIBLE_DEVICES=i, concurrency 1, hostname gpu{i}@host), submit a batch "
        "(default 8 runs from 4 learners) at once, and report its wall time, which worker and GPU (UUID) ran "
        "each run, whether any GPU ran two at once, and whether /healthz lists every worker; --compare runs "
        "the same batch on 1 worker too and prints the ratio. --warm-start-report: a fresh worker (and, with "
        "--fresh-cache, empty compile caches), its warm-up, then each default experiment timed request to done."
    )

    def add_arguments(self, parser):
        parser.add_argument("--experiments", default=",".join(CATALOG), help="comma-separated ids")
        parser.add_argument("--timeout", type=int, default=600, help="seconds to wait for each run (batch: all)")
        parser.add_argument("--workers", type=int, default=0, help="batch mode: this many workers, one per GPU")
        parser.add_argument("--batch", type=int, default=8, help="batch mode: runs in the batch")
        parser.add_argument("--learners", type=int, default=4, help="batch mode: learners the batch comes from")
        parser.add_argument("--compare", action="store_true", help="batch mode: also the same batch on 1 worker")
        parser.add_argument("--device-kind", default="any", help="what the runs ask for: any, h100, h200, ...")
        parser.add_argument(
            "--quick", action="store_true", help=f"small parameters and {QUICK_EXPERIMENTS}: seconds on a CPU"
        )
        parser.add_argument(
            "--warm-start-report", action="store_true", help="time each default experiment on a freshly started worker"
        )
        parser.add_argument(
            "--fresh-cache", action="store_true", help="start the workers with empty Inductor and Triton caches"
        )
        parser.add_argument(
            "--up-for", type=float, default=60, help="--warm-start-report: seconds the worker is up before the first"
        )

    def handle(self, *args, **options):
        if options["quick"] and options["experiments"] == ",".join(CATALOG):
            options["experiments"] = QUICK_EXPERIMENTS
        experiments = [e.strip() for e in options["experiments"].split(",") if e.strip()]
        unknown = [e for e in experiments if e not in CATALOG]
        if unknown or not experiments:
            raise CommandError(
                f"unknown experiments: {', '.join(unknown) or 'none given'}; known: {', '.join(CATALOG)}"
            )
        if options["workers"] < 0 or options["batch"] < 1 or options["learners"] < 1:
            raise CommandError("--workers, --batch and --learners must be positive")
        if options["batch"] > 3 * options["learners"]:
            raise CommandError("a learner may have 3 runs queued at once: use more --learners or a smaller --batch")
        params = QUICK_PARAMS if options["quick"] else {}
        env = {}
        if options["fresh_cache"]:
            cache = tempfile.mkdtemp(prefix="tilewise-compile-cache-")
            env = {
                "COMPILE_CACHE_DIR": cache,
                "TORCHINDUCTOR_CACHE_DIR": f"{cache}/inductor",
                "TRITON_CACHE_DIR": f"{cache}/triton",
            }
        fleet = Fleet.with_broker()
        try:
            if options["warm_start_report"]:
                self.warm_start_report(fleet, experiments, params, env, options)
            elif options["workers"]:
                self.batch(fleet, experiments, params, env, options)
            else:
                self.one_by_one(fleet, experiments, params, env, options)
        except E2EError as exc:
            raise CommandError(str(exc)) from None
        finally:
            fleet.stop()

    def one_by_one(self, fleet: Fleet, experiments, params, env, options) -> None:
        fleet.start_workers(1, env=env)
        fleet.wait_until_warm(options["timeout"] * len(experiments))
        self.stdout.write(f"broker {fleet.redis_url}; worker {fleet.hostnames[0]} up")
        for exp in experiments:  # one at a time: each figure is one run's own turnaround on a warm worker
            self.time_one(exp, params.get(exp, {}), options)

    def time_one(self, exp: str, params: dict, options) -> tuple[LabRun, float]:
        from labs.services import request_run

        user, _ = get_user_model().objects.get_or_create(username="lab-e2e")
        t0 = time.monotonic()
        run = request_run(user=user, experiment=exp, params=params, device_kind=options["device_kind"])
        while not run.finished and time.monotonic() - t0 < options["timeout"]:
            time.sleep(0.2)
            run.refresh_from_db()
        took = time.monotonic() - t0
        wait = (run.started_at - run.created_at).total_seconds() if run.started_at else float("nan")
        device = (run.device or {}).get("name", "?")
        self.stdout.write(
            f"{exp:20} {run.status:9} {took:6.1f} s request→{run.status} (queued {wait:.1f} s) on {device}"
            + (f" ({run.error})" if run.error else "")
        )
        return run, took

    def batch(self, fleet: Fleet, experiments, params, env, options) -> None:
        plan = batch_plan(options["batch"], learners=options["learners"], experiments=experiments, params=params)
        self.stdout.write(
            f"batch: {len(plan)} runs from {options['learners']} learners ({', '.join(experiments)}); "
            f"broker {fleet.redis_url}"
        )
        walls = {}
        counts = [options["workers"]] + ([1] if options["compare"] and options["workers"] != 1 else [])
        for count in counts:
            fleet.start_workers(count, env=env)
            warmed = fleet.wait_until_warm(options["timeout"])
            listed_all, listed = health_lists(fleet.hostnames)
            self.stdout.write(
                f"\n{count} worker(s): {', '.join(fleet.hostnames)} (warm-up waited {warmed:.0f} s); "
                f"/healthz lists {'all of them' if listed_all else 'NOT all: ' + ', '.join(listed)}"
            )
            batch = run_batch(plan, device_kind=options["device_kind"], timeout=options["timeout"])
            walls[count] = batch.wall_s
            self.report_batch(batch)
            clashes = overlaps(batch.runs)
            for a, b in clashes:
                self.stdout.write(f"  OVERLAP on {device_key(a)}: run #{a.pk} and run #{b.pk}")
            failed = [r for r in batch.runs if r.status != LabRun.Status.DONE]
            self.stdout.write(
                f"  wall time {batch.wall_s:.1f} s; {len(failed)} not done; "
                f"{'no GPU ran two runs at once' if not clashes else f'{len(clashes)} overlaps'}; "
                f"devices used: {len({device_key(r) for r in batch.runs if r.started_at})}"
            )
            fleet.stop_workers()
            if clashes or failed or not listed_all:
                raise CommandError(f"{count} worker(s): the batch check failed (see above)")
        if len(walls) == 2:
            ratio = walls[options["workers"]] / walls[1]
            verdict = "meets" if ratio <= BATCH_TARGET_RATIO else "misses"
            self.stdout.write(
                f"\n{options['workers']} workers / 1 worker: {walls[options['workers']]:.1f} s / {walls[1]:.1f} s "
                f"= {ratio:.2f}x ({verdict} the {BATCH_TARGET_RATIO}x target)"
            )

    def report_batch(self, batch) -> None:
        t0 = min(r.created_at for r in batch.runs)
        self.stdout.write(
            f"  {'run':>6} {'learner':10} {'experiment':20} {'status':8} {'start':>7} {'end':>7}  worker / GPU"
        )
        for r in batch.runs:
            start = (r.started_at - t0).total_seconds() if r.started_at else float("nan")
            end = (r.finished_at - t0).total_seconds() if r.finished_at else float("nan")
            self.stdout.write(
                f"  #{r.pk:<5} {r.user.username:10} {r.experiment:20} {r.status:8} {start:7.1f} {end:7.1f}  "
                f"{r.worker or '-'} / {device_key(r)}"
            )

    def warm_start_report(self, fleet: Fleet, experiments, params, env, options) -> None:
        started = time.monotonic()
        fleet.start_workers(1, env={"LABS_WARM_UP": "true", **env})
        warm = fleet.wait_until_warm(options["timeout"] * len(experiments))
        wait_more = options["up_for"] - (time.monotonic() - started)
        if wait_more > 0:
            time.sleep(wait_more)
        self.stdout.write(
            f"worker {fleet.hostnames[0]} up {time.monotonic() - started:.0f} s (warm-up {warm:.0f} s after start"
            f"{', from empty compile caches' if env else ''}); each default experiment, request to done:"
        )
        rows = [self.time_one(exp, params.get(exp, {}), options) for exp in experiments]
        first = next((r for r, _ in rows if r.device), None)
        device = (first.device or {}) if first else {}
        versions = (first.versions or {}) if first else {}
        self.stdout.write(f"\ndevice: {device.get('description') or device.get('name', '?')}")
        self.stdout.write("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v))
        slow = [r.experiment for r, took in rows if took > WARM_TARGET_S or r.status != LabRun.Status.DONE]
        self.stdout.write(
            f"target <= {WARM_TARGET_S:.0f} s each: " + ("met" if not slow else f"missed by {', '.join(slow)}")
        )
