"""Prometheus metrics of the lab fleet, computed when scraped (prometheus-client's custom collector).

- tilewise_queue_depth{queue}: messages waiting per queue (default, gpu, gpu.<kind>);
- tilewise_workers{device_kind, state}: live workers by device kind and state (idle, busy, warming);
- tilewise_lab_runs{status}: lab runs per status;
- tilewise_lab_run_seconds{experiment, device_kind} and tilewise_lab_wait_seconds{...}: histograms
  of finished runs' run time (started to finished) and queueing time (requested to started).

Computed from the broker and the database at scrape time, so every web process answers the same
and no worker needs a metrics port. The histograms count every finished run ever recorded (so their
counts only grow, as Prometheus expects); each scrape is one aggregate query per histogram.
/metrics answers staff, or a scraper that sends `Authorization: Bearer <METRICS_TOKEN>`.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from django.http import HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily

from labs.fleet import fleet_overview
from labs.models import LabRun

BUCKETS_S = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600)


class FleetCollector:
    def collect(self):
        overview = fleet_overview()
        depth = GaugeMetricFamily("tilewise_queue_depth", "Messages waiting in each queue", labels=["queue"])
        for q in overview["queues"]:
            depth.add_metric([q["name"]], q["depth"])
        yield depth
        workers = GaugeMetricFamily(
            "tilewise_workers", "Live workers by device kind and state", labels=["device_kind", "state"]
        )
        counts: dict[tuple[str, str], int] = {}
        for w in overview["workers"]:
            key = (str(w["device"].get("device_kind") or w["device"].get("kind")), str(w["state"]))
            counts[key] = counts.get(key, 0) + 1
        for (kind, state), n in sorted(counts.items()):
            workers.add_metric([kind, state], n)
        yield workers
        runs = GaugeMetricFamily("tilewise_lab_runs", "Lab runs by status", labels=["status"])
        by_status = dict(LabRun.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
        for status in LabRun.Status.values:
            runs.add_metric([status], by_status.get(status, 0))
        yield runs
        yield _histogram("tilewise_lab_run_seconds", "Run time of finished lab runs", "started_at", "finished_at")
        yield _histogram("tilewise_lab_wait_seconds", "Queueing time of started lab runs", "created_at", "started_at")


def _histogram(name: str, documentation: str, start: str, end: str) -> HistogramMetricFamily:
    from datetime import timedelta

    family = HistogramMetricFamily(name, documentation, labels=["experiment", "device_kind"])
    seconds = ExpressionWrapper(F(end) - F(start), output_field=DurationField())
    buckets = {f"le_{b}": Count("id", filter=Q(duration__lte=timedelta(seconds=b))) for b in BUCKETS_S}
    rows = (
        LabRun.objects.filter(**{f"{start}__isnull": False, f"{end}__isnull": False})
        .annotate(duration=seconds)
        .values("experiment", "device_kind")
        .annotate(count=Count("id"), total=Sum("duration"), **buckets)
        .order_by("experiment", "device_kind")
    )
    for row in rows:
        cumulative = [(str(float(b)), row[f"le_{b}"]) for b in BUCKETS_S] + [("+Inf", row["count"])]
        total = row["total"].total_seconds() if row["total"] is not None else 0.0
        family.add_metric([row["experiment"], row["device_kind"]], cumulative, sum_value=total)
    return family


def render_metrics() -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FleetCollector())
    return generate_latest(registry)


def _allowed(request) -> bool:
    if request.user.is_authenticated and request.user.is_staff:
        return True
    token = settings.METRICS_TOKEN
    sent = request.headers.get("Authorization", "")
    return bool(token) and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())


@never_cache
@require_GET
def metrics(request):
    """Prometheus text format; 403 (JSON) unless staff or the METRICS_TOKEN bearer."""
    if not _allowed(request):
        return JsonResponse(
            {"detail": "Metrics are for staff, or for a scraper sending Authorization: Bearer <METRICS_TOKEN>."},
            status=403,
        )
    return HttpResponse(render_metrics(), content_type=CONTENT_TYPE_LATEST)
