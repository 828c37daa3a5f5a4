"""The GPU fleet as operators see it: each worker, its device, what it runs now, and each queue's depth.

Read from the workers' heartbeats and the broker (workers/heartbeat.py, workers/queues.py) and the
lab runs in the database; the staff page /staff/fleet/ and /metrics show it.
"""

from __future__ import annotations

from typing import Any

from labs.models import LabRun
from tutor.redis_client import get_redis
from workers.heartbeat import live_workers
from workers.queues import known_queues, queue_depth


def fleet_overview() -> dict[str, Any]:
    """{"workers": [...], "queues": [{"name", "depth", "consumers"}], "error": None or why it is empty}."""
    try:
        client = get_redis()
        workers = live_workers()
        names = set(known_queues(client)) | {q for w in workers for q in w["queues"]}
        depths = {name: queue_depth(client, name) for name in sorted(names)}
    except Exception as exc:  # the broker is down: say so on the page instead of failing it
        reason = " ".join(str(exc).split())[:200]
        return {"workers": [], "queues": [], "error": f"the broker cannot be reached ({reason})"}
    runs = _current_runs(workers)
    listed = []
    for w in workers:
        current = w.get("current") or {}
        listed.append(
            {
                "hostname": w["hostname"],
                "queues": w["queues"],
                "state": w.get("state", "idle"),
                "device": w["device"],
                "task": current.get("task"),
                "since": current.get("since"),
                "run": runs.get(str(w["hostname"])),
            }
        )
    queues = [
        {"name": name, "depth": depth, "consumers": sum(1 for w in workers if name in w["queues"])}
        for name, depth in depths.items()
    ]
    return {"workers": listed, "queues": queues, "error": None}


def _current_runs(workers: list[dict]) -> dict[str, LabRun]:
    """Worker hostname -> the lab run it is running now (from the task it announced)."""
    wanted = {}
    for w in workers:
        current = w.get("current") or {}
        if current.get("task") == "labs.run_lab" and current.get("args"):
            try:
                wanted[str(w["hostname"])] = int(current["args"][0])
            except (TypeError, ValueError):
                continue
    found = LabRun.objects.select_related("user").in_bulk(list(wanted.values()))
    return {host: found[pk] for host, pk in wanted.items() if pk in found}
