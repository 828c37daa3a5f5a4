"""Health of the service and the things it depends on, for /healthz and the status page.

Core = database + broker: without them nothing can be recorded or queued, so /healthz is 200
only when both are up. Workers, the GPU and the LLM server are reported but optional. Staff see
the whole report; everyone else sees `public_health()`: up or down, no addresses or errors.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db import connection


def check_database() -> dict[str, Any]:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return {"ok": False, "vendor": connection.vendor, "error": _one_line(exc)}
    return {"ok": True, "vendor": connection.vendor, "ms": _ms_since(started)}


def check_broker() -> dict[str, Any]:
    from tutor.redis_client import get_redis

    started = time.perf_counter()
    try:
        get_redis().ping()
    except Exception as exc:
        return {"ok": False, "url": _redact(settings.REDIS_URL), "error": _one_line(exc)}
    return {"ok": True, "url": _redact(settings.REDIS_URL), "ms": _ms_since(started)}


def check_workers(broker_ok: bool) -> dict[str, Any]:
    if not broker_ok:
        return {"ok": False, "count": 0, "workers": [], "error": "broker is down"}
    from workers.heartbeat import live_workers

    try:
        workers = live_workers()
    except Exception as exc:
        return {"ok": False, "count": 0, "workers": [], "error": _one_line(exc)}
    listed = [
        {
            "hostname": w["hostname"],
            "queues": w["queues"],
            "device": w["device"],
            "concurrency": w["concurrency"],
            "state": w.get("state", "idle"),  # warming (compile caches filling), busy or idle
            "current": w.get("current"),
        }
        for w in workers
    ]
    result: dict[str, Any] = {"ok": bool(listed), "count": len(listed), "workers": listed}
    if not listed:
        result["error"] = "no worker is running: queued reviews exports and labs will wait"
    return result


def check_llm() -> dict[str, Any]:
    """Asks the configured OpenAI-compatible server for its models (short timeout)."""
    if not settings.LLM_BASE_URL:
        return {
            "ok": True,
            "mode": "course-notes",
            "detail": "no LLM server configured: the teacher answers from the course notes",
        }
    import openai

    client = openai.OpenAI(base_url=settings.LLM_BASE_URL, api_key=settings.LLM_API_KEY, timeout=2.0, max_retries=0)
    try:
        models = [m.id for m in client.models.list().data]
    except Exception as exc:
        return {
            "ok": False,
            "mode": "llm",
            "base_url": settings.LLM_BASE_URL,
            "error": f"LLM server unreachable: {_one_line(exc)}; the teacher falls back to course notes",
        }
    return {
        "ok": True,
        "mode": "llm",
        "base_url": settings.LLM_BASE_URL,
        "model": settings.LLM_MODEL or (models[0] if models else ""),
        "models": models[:10],
    }


def service_health() -> dict[str, Any]:
    database = check_database()
    broker = check_broker()
    workers = check_workers(broker["ok"])
    gpu_workers = [
        w["hostname"] for w in workers["workers"] if w["device"].get("kind") == "cuda" and "gpu" in w["queues"]
    ]
    devices = [
        {
            "hostname": w["hostname"],
            "device_kind": w["device"].get("device_kind"),
            "name": w["device"].get("name"),
            "uuid": w["device"].get("uuid"),
            "pci_bus_id": w["device"].get("pci_bus_id"),
            "state": w["state"],
        }
        for w in workers["workers"]
        if w["hostname"] in gpu_workers
    ]
    core_ok = database["ok"] and broker["ok"]
    return {
        "status": "ok" if core_ok else "down",
        "database": database,
        "broker": broker,
        "workers": workers,
        "gpu": {
            "present": bool(gpu_workers),
            "workers": gpu_workers,
            "devices": devices,
            "detail": "GPU worker online" if gpu_workers else "no GPU worker: labs run on the CPU worker and say so",
        },
        "llm": check_llm(),
    }


def public_health(health: dict[str, Any]) -> dict[str, Any]:
    """What anyone may see of a `service_health()` report: whether each part is up, and no more.

    Addresses, host names, models and error text are for staff: they map the deployment for an
    attacker. The booleans stay, so that monitors (and CI's smoke test) can read them anonymously.
    """
    parts = ("database", "broker", "workers", "llm")
    return {
        "status": health["status"],
        "down": [part for part in parts if not health[part]["ok"]],
        "database": {"ok": health["database"]["ok"]},
        "broker": {"ok": health["broker"]["ok"]},
        "workers": {"ok": health["workers"]["ok"], "count": health["workers"]["count"]},
        "gpu": {"present": health["gpu"]["present"]},
        "llm": {"ok": health["llm"]["ok"], "mode": health["llm"]["mode"]},
        "details": "staff only: log in as staff for addresses, workers and errors",
    }


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _redact(url: str) -> str:
    """Hide a password in a redis://user:password@host URL."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"
