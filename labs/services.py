"""Lab runs end to end: request (validated, within quota), queue, run on a worker, record.

The web process never imports torch: requests are validated with the catalog's parameter
classes (torch-free), and experiments run only inside Celery workers.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from labs.models import DeviceCalibration, LabArtifact, LabRun
from labs.tasks import run_lab as run_lab_task
from tutor.errors import DomainError
from tutor.review.services import lock_learner
from tutor.review.study_sessions import touch_session
from workers.app import app
from workers.device import ANY, KIND_PATTERN, KNOWN_KINDS
from workers.heartbeat import heartbeats_complete, live_workers
from workers.queues import DEFAULT, GPU, gpu_queue, is_gpu_queue, queue_depth, send_on_commit, task_ids_in_broker

MAX_ACTIVE_RUNS = 3
# What a learner predicts before a run, for the experiments that measure a speedup.
PREDICTIONS = {
    "fused_vs_unfused": "best speedup of a fused variant over eager PyTorch",
    "launch_overhead": "speedup of one CUDA graph replay over eager launches",
    "attention": "best speedup of an attention backend over naive attention",
}
MAX_RUN_ATTEMPTS = 2  # a run whose worker dies is retried once, then marked failed
MAX_SENDS = 3  # a run whose queue message is lost is sent again twice, then marked failed
PROGRESS_EVERY_S = 0.5


@dataclass(frozen=True)
class Target:
    kind: str  # "cuda" or "cpu": the device the run will most likely get
    memory_bytes: int | None
    detail: str
    queue: str = GPU  # where the run is sent: "gpu.<device kind>", or "gpu" while no lab worker is online
    device_kind: str = ANY  # the device kind it goes to ("any" only while no lab worker is online)


def lab_workers() -> list[dict]:
    """Live workers that take lab runs (the "gpu" queue), each with its device kind."""
    try:
        return [w for w in live_workers() if any(is_gpu_queue(q) for q in w["queues"])]
    except Exception:  # broker down: nobody is known to be online
        return []


def online_kinds(workers: list[dict] | None = None) -> dict[str, list[dict]]:
    """Device kind -> its live lab workers."""
    kinds: dict[str, list[dict]] = {}
    for w in lab_workers() if workers is None else workers:
        kinds.setdefault(str(w["device"].get("device_kind") or w["device"].get("kind")), []).append(w)
    return kinds


def requestable_kinds(workers: list[dict] | None = None) -> list[str]:
    """What a learner may pick: "any", the kinds online now, and the well-known GPU kinds (refused while offline)."""
    online = online_kinds(workers)
    return [ANY, *sorted(set(online) | {slug for slug, _ in KNOWN_KINDS})]


def target_device(device_kind: str = ANY) -> Target:
    """Where a run asked for `device_kind` goes now, from the live workers' heartbeats.

    A kind with no live worker is refused (DomainError, 400) before anything is queued. "any" picks an
    online kind, preferring one with an idle worker, then the shortest queue; with no lab worker online
    at all the run waits on the shared "gpu" queue for the first worker that starts.
    """
    device_kind = (device_kind or ANY).strip().lower()
    if device_kind != ANY and not KIND_PATTERN.match(device_kind):
        raise DomainError("Ask for a device kind such as h100, h200 or any.", "device_kind")
    kinds = online_kinds()
    if not kinds:
        if device_kind != ANY:
            raise DomainError(_offline_message(device_kind, kinds), "device_kind")
        return Target("cpu", None, "no worker is online: the run waits in the queue until one starts")
    if device_kind == ANY:
        device_kind = _least_loaded(kinds)
    elif device_kind not in kinds:
        raise DomainError(_offline_message(device_kind, kinds), "device_kind")
    workers = kinds[device_kind]
    queue = gpu_queue(device_kind)
    gpus = [w for w in workers if w["device"].get("kind") == "cuda"]
    if gpus:
        memory = min((w["device"].get("memory_bytes") or 0) for w in gpus) or None
        name = gpus[0]["device"].get("name")
        return Target("cuda", memory, f"{len(gpus)} {name} GPU worker(s) ({device_kind})", queue, device_kind)
    return Target(
        "cpu",
        None,
        f"no GPU worker online: the CPU worker runs it (results say CPU) ({device_kind})",
        queue,
        device_kind,
    )


def _least_loaded(kinds: dict[str, list[dict]]) -> str:
    """The online kind with an idle worker, else the fewest runs waiting per worker (ties: by name)."""
    from tutor.redis_client import get_redis

    def load(kind: str) -> tuple:
        idle = sum(1 for w in kinds[kind] if w.get("state") == "idle")
        try:
            waiting = queue_depth(get_redis(), gpu_queue(kind))
        except Exception:
            waiting = 0
        return (idle == 0, waiting / len(kinds[kind]), -idle, kind)

    return min(kinds, key=load)


def _offline_message(kind: str, kinds: dict[str, list[dict]]) -> str:
    online = ", ".join(sorted(kinds)) or "none"
    return (
        f"No {kind} worker is online, so the run was not queued. Online now: {online}. Ask for one of those or for any."
    )


def catalog_for(target: Target) -> list[dict]:
    from labs.experiments.catalog import catalog

    return catalog(target.kind)


def request_run(
    *,
    user,
    experiment: str,
    params: dict[str, Any] | None = None,
    predicted_speedup: float | None = None,
    device_kind: str = ANY,
) -> LabRun:
    from labs.experiments.catalog import validate_params
    from labs.experiments.params import ParamError

    _check_quota(user)  # first: at the limit, that is the answer whatever the parameters
    if predicted_speedup is not None and not 0.01 <= predicted_speedup <= 10_000:
        raise DomainError("Predict a speedup between 0.01x and 10000x.", "predicted_speedup")
    if params is not None and not isinstance(params, dict):
        raise DomainError("Parameters must be an object of name: value.", "params")
    target = target_device(device_kind)  # a kind that is not online is refused here, before queueing
    try:
        parsed = validate_params(
            experiment, params or {}, device_kind=target.kind, device_memory_bytes=target.memory_bytes
        )
    except ParamError as exc:
        raise DomainError(exc.message, exc.field) from None
    with transaction.atomic():
        lock_learner(user)  # parallel requests count and insert one at a time
        _check_quota(user)
        run = LabRun.objects.create(
            user=user,
            session=touch_session(user, timezone.now()),
            experiment=experiment,
            params=parsed.to_dict(),
            predicted_speedup=predicted_speedup,
            device_kind=(device_kind or ANY).strip().lower(),
            queue=target.queue,
            phase=f"queued ({target.detail})",
        )
    enqueue(run)
    return run


def _check_quota(user) -> None:
    if LabRun.objects.filter(user=user, status__in=LabRun.ACTIVE).count() >= MAX_ACTIVE_RUNS:
        raise DomainError(
            f"You already have {MAX_ACTIVE_RUNS} lab runs queued or running; wait for one to "
            "finish or cancel a queued one.",
            status=429,
        )


def enqueue(run: LabRun) -> None:
    """Queue the run for a GPU (or the CPU worker) once it is committed; `run` reflects the outcome.

    The message's id is stored first (with the time and count of sends), so a worker that takes it at once
    finds it, and a message sent earlier for the same run (redelivered, or re-sent) is recognised as stale."""
    task_id = str(uuid.uuid4())
    LabRun.objects.filter(pk=run.pk).update(task_id=task_id, sent_at=timezone.now(), sends=F("sends") + 1)
    run.refresh_from_db(fields=["task_id", "sent_at", "sends"])

    def keep_request(reason: str) -> None:
        LabRun.objects.filter(pk=run.pk).update(
            status=LabRun.Status.FAILED,
            finished_at=timezone.now(),
            task_id="",
            phase="failed: not queued",
            error=f"Could not queue the run: {reason}. Your request is kept; start it again when the service is back.",
        )
        run.refresh_from_db()

    send_on_commit(run_lab_task, args=[run.pk], queue=run.queue or GPU, task_id=task_id, on_broker_down=keep_request)


def requeue_lost_runs() -> int:
    """Queued runs whose message the broker no longer holds are sent again, up to MAX_SENDS times in all,
    then failed with the reason. Returns how many were handled.

    A Redis broker that restarts without persistence loses every message it held; a web process that stops
    between storing a run and sending it never sent one. Only runs sent more than LAB_REQUEUE_SECONDS ago
    are looked at, and each under a row lock (skipped if another sweeper holds it): a run is never sent
    twice by two sweepers, and a worker runs only the message whose id the run holds (execute_run), so a
    run never executes twice at once. Broker down: nothing is done (it cannot be told what was lost)."""
    from django.conf import settings

    bound = timezone.now() - timedelta(seconds=settings.LAB_REQUEUE_SECONDS)
    candidates = list(
        LabRun.objects.filter(status=LabRun.Status.QUEUED)
        .filter(Q(sent_at__lt=bound) | Q(sent_at__isnull=True, created_at__lt=bound))
        .values_list("pk", flat=True)
    )
    if not candidates:
        return 0
    # Every queue a candidate may wait in: the per-kind GPU queues as well as the shared ones.
    queues = {DEFAULT, GPU, *LabRun.objects.filter(pk__in=candidates).exclude(queue="").values_list("queue", flat=True)}
    held = task_ids_in_broker(app, queues=tuple(sorted(queues)))
    if held is None:
        return 0
    handled = 0
    for pk in candidates:
        with transaction.atomic():
            run = LabRun.objects.select_for_update(skip_locked=True).filter(pk=pk, status=LabRun.Status.QUEUED).first()
            if run is None or run.task_id in held or (run.sent_at is not None and run.sent_at >= bound):
                continue
            handled += 1
            if run.sends >= MAX_SENDS:
                _fail(
                    run,
                    f"The task queue lost this run {run.sends} times (its broker restarted); start it again.",
                )
                continue
            LabRun.objects.filter(pk=run.pk).update(phase="re-queued: the task queue lost it (its broker restarted)")
            enqueue(run)  # sent when this transaction commits
    return handled


def cancel_run(*, user, run_id: int) -> LabRun:
    with transaction.atomic():
        run = LabRun.objects.select_for_update().filter(user=user, pk=run_id).first()
        if run is None:
            raise DomainError("No such lab run.", "run", status=404)
        if run.status != LabRun.Status.QUEUED:
            raise DomainError(f"Only queued runs can be cancelled; this one is {run.status}.", "run", status=409)
        run.status = LabRun.Status.CANCELLED
        run.finished_at = timezone.now()
        run.phase = "cancelled before it started"
        run.save(update_fields=["status", "finished_at", "phase"])
    if run.task_id:
        app.control.revoke(run.task_id)
    return run


def execute_run(run_id: int, *, task_id: str, worker: str) -> LabRun | None:
    """Called by the Celery task on a worker. Runs the experiment and records the outcome."""
    with transaction.atomic():
        run = LabRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.finished:
            return run  # cancelled (or already finished): nothing to do
        if run.task_id and task_id and run.task_id != task_id:
            return run  # a stale redelivery of a message that was re-queued since
        if run.attempts >= MAX_RUN_ATTEMPTS:
            _fail(run, f"The worker stopped during this run {run.attempts} times; giving up.")
            return run
        run.status = LabRun.Status.RUNNING
        run.attempts += 1
        run.worker = worker
        run.started_at = timezone.now()
        run.progress, run.phase = 0, "starting"
        run.save()
    try:
        result = _run_experiment(run)
    except Exception as exc:
        _fail(run, explain_failure(exc))
        raise
    _finish(run, result)
    return run


def warm_up_list() -> list[str]:
    """The experiments a starting worker warms: LABS_WARM_UP_EXPERIMENTS, or the whole catalog."""
    from django.conf import settings

    from labs.experiments.catalog import CATALOG

    chosen = [e for e in settings.LABS_WARM_UP_EXPERIMENTS if e in CATALOG]
    return chosen or list(CATALOG)


def warm_up_experiments(experiments: list[str]) -> dict[str, object]:
    """Run each experiment once with its defaults, in this process; {id: seconds or the error}.

    At the defaults, not at a small size: torch.compile specializes its kernels to each shape
    (the labs compile with dynamic=False), so only the default shapes fill the caches that a
    learner's default run then reads. A failure is logged and skipped: it is the run's to report.
    """
    import logging

    from django.conf import settings

    from labs.experiments.runner import run_experiment

    log = logging.getLogger("labs.warm_up")
    took: dict[str, object] = {}
    for experiment in experiments:
        started = time.monotonic()
        try:
            run_experiment(experiment, {}, cpu_threads=settings.LABS_CPU_THREADS, cache_dir=settings.LABS_CACHE_DIR)
            took[experiment] = round(time.monotonic() - started, 2)
        except Exception as exc:  # noqa: BLE001 - a warm-up never stops the worker
            took[experiment] = explain_failure(exc)
        log.warning("warm-up %s: %s", experiment, took[experiment])
    return took


def _run_experiment(run: LabRun) -> dict:
    from django.conf import settings

    from labs.experiments.runner import run_experiment

    last = [0.0]

    def progress(percent: int, phase: str) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S or percent >= 100:
            last[0] = now
            LabRun.objects.filter(pk=run.pk, status=LabRun.Status.RUNNING).update(
                progress=max(0, min(100, int(percent))), phase=phase[:200]
            )

    return run_experiment(
        run.experiment,
        run.params,
        progress=progress,
        cpu_threads=settings.LABS_CPU_THREADS,
        cache_dir=settings.LABS_CACHE_DIR,
    )


def _finish(run: LabRun, result: dict) -> None:
    """Store the artifacts first, then mark the run done: a learner who sees "done" sees everything."""
    LabArtifact.objects.update_or_create(
        run=run,
        name="result.json",
        defaults={
            "content_type": "application/json",
            "file": ContentFile(json.dumps(result, indent=1).encode(), name=f"run-{run.pk}-result.json"),
        },
    )
    svg = plot_svg(result)
    if svg:
        LabArtifact.objects.update_or_create(
            run=run,
            name="plot.svg",
            defaults={
                "content_type": "image/svg+xml",
                "file": ContentFile(svg.encode(), name=f"run-{run.pk}-plot.svg"),
            },
        )
    roofs = (result.get("artifacts") or {}).get("roofs")
    if run.experiment == "roofline" and roofs:
        DeviceCalibration.objects.update_or_create(
            device_name=_device_name(result.get("device")), defaults={"roofs": roofs}
        )
    LabRun.objects.filter(pk=run.pk).update(
        result=result,
        device=_with_worker(result.get("device"), run.worker),
        versions=result.get("versions"),
        status=LabRun.Status.DONE,
        progress=100,
        phase="done",
        finished_at=timezone.now(),
    )
    run.refresh_from_db()


def _with_worker(device: dict | None, worker: str) -> dict | None:
    """The run's device as the experiment saw it, plus which worker and host ran it.

    A worker pinned with CUDA_VISIBLE_DEVICES sees its GPU as index 0 whichever physical GPU it is:
    the record tells them apart by the GPU's UUID and PCI bus id (labs.experiments.device) and by
    the worker's Celery hostname and the machine's host name.
    """
    if device is None:
        return None
    return {**device, "worker": worker, "host": socket.gethostname()}


def _device_name(device: dict | None) -> str:
    return str((device or {}).get("name") or "unknown device")


def roofline_for(run: LabRun) -> dict:
    """Where each kernel of a finished run sits against its device's measured roofs (or what is missing)."""
    from labs.experiments.roofline import roofline_view

    device = _device_name(run.device)
    calibration = DeviceCalibration.objects.filter(device_name=device).first()
    if run.status != LabRun.Status.DONE or not run.result:
        return {"available": False, "reason": "The run has not finished.", "device": device}
    if calibration is None:
        return {
            "available": False,
            "device": device,
            "needs_calibration": True,
            "reason": f"No roofs measured for {device} yet: run the roofline calibration on it first.",
        }
    view = roofline_view(run.result, calibration.roofs)
    return {"available": True, "device": device, "calibrated_at": calibration.updated_at.isoformat(), **view}


def _fail(run: LabRun, message: str) -> None:
    LabRun.objects.filter(pk=run.pk).update(
        status=LabRun.Status.FAILED, error=message, finished_at=timezone.now(), phase="failed"
    )
    run.refresh_from_db()


def explain_failure(exc: BaseException) -> str:
    """One paragraph a learner can read, not a traceback."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())[:300]
    if name == "SoftTimeLimitExceeded":
        return "The run took longer than its time limit and was stopped; try smaller sizes."
    if name == "OutOfMemoryError" or "out of memory" in text.lower():
        return f"The device ran out of memory ({text}); try smaller sizes."
    if name == "ParamError":
        return f"The parameters do not suit the device this run landed on: {text}"
    return f"The experiment failed: {name}: {text}"


def reap_stale_runs(*, user=None) -> int:
    """Runs stuck in "running" whose worker is gone: re-queued once, then failed. Returns how many."""

    try:
        if not heartbeats_complete():
            return 0  # Redis restarted moments ago: live workers have not announced themselves again yet
        alive = {w["hostname"] for w in live_workers()}
    except Exception:
        return 0  # broker down: cannot tell; leave them
    runs = LabRun.objects.filter(status=LabRun.Status.RUNNING)
    if user is not None:
        runs = runs.filter(user=user)
    count = 0
    for run in runs.exclude(worker__in=alive):
        count += 1
        if run.attempts >= MAX_RUN_ATTEMPTS:
            _fail(run, f"The worker ({run.worker}) stopped during this run {run.attempts} times; giving up.")
            continue
        LabRun.objects.filter(pk=run.pk, status=LabRun.Status.RUNNING).update(
            status=LabRun.Status.QUEUED, progress=0, phase=f"re-queued: worker {run.worker} stopped mid-run"
        )
        run.refresh_from_db()
        enqueue(run)
    return count


def headline_speedup(result: dict | None) -> dict | None:
    """The best measured speedup over the experiment's baseline, for predict-then-measure."""
    if not result:
        return None
    best = None
    for row in result.get("rows", []):
        for key, value in row.items():
            if key.startswith("speedup_vs_") and isinstance(value, int | float) and value > 0:
                if best is None or value > best["value"]:
                    best = {"value": value, "baseline": key.removeprefix("speedup_vs_"), "row": row}
    return best


def plot_svg(result: dict) -> str | None:
    """The run's plot as an SVG file (matplotlib on the worker); None if it has no plot."""
    plot = (result.get("artifacts") or {}).get("plot")
    if not plot or not plot.get("series"):
        return None
    import io

    try:
        import matplotlib
    except ImportError:  # a worker image without matplotlib: the page still plots the series itself
        return None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for series in plot["series"]:
        ax.plot(series["x"], series["y"], marker="o", label=series["name"])
    ax.set_title(plot.get("title", ""))
    ax.set_xlabel(plot.get("x_label", ""))
    ax.set_ylabel(plot.get("y_label", ""))
    if plot.get("x_log"):
        ax.set_xscale("log")
    if plot.get("y_log"):
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend()
    device = (result.get("device") or {}).get("description") or (result.get("device") or {}).get("name", "")
    fig.text(0.01, 0.01, f"{device}; {result.get('method', '')[:110]}", fontsize=6, color="#667085")
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def describe_for_teacher(run: LabRun, *, max_rows: int = 12) -> str:
    """A finished run's numbers as text the teacher can explain (prompt context, course-notes answer)."""
    from labs.experiments.catalog import CATALOG

    exp = CATALOG.get(run.experiment)
    lines = [f"Lab run #{run.pk}: {exp.title if exp else run.experiment} ({run.status})."]
    if exp:
        lines.append(f"What it measures: {exp.summary}.")
    result = run.result or {}
    if result:
        device = result.get("device") or {}
        lines.append(f"Device: {device.get('description') or device.get('name')}.")
        lines.append(f"Method: {result.get('method', '')}")
        for row in (result.get("rows") or [])[:max_rows]:
            shown = {
                k: (round(v, 4) if isinstance(v, float) else v)
                for k, v in row.items()
                if k not in ("q25_ms", "q75_ms", "reps") and v is not None
            }
            lines.append("- " + ", ".join(f"{k}={v}" for k, v in shown.items()))
        lines += [f"Note: {n}" for n in result.get("notes", [])]
    best = headline_speedup(run.result)
    if best:
        lines.append(f"Best measured speedup: {best['value']:.2f}x over {best['baseline']}.")
    if run.predicted_speedup:
        lines.append(f"The learner predicted {run.predicted_speedup:g}x before the run.")
    if run.error:
        lines.append(f"Error: {run.error}")
    return "\n".join(lines)
