"""Flower (Celery's monitor) behind the admin login: /staff/flower/ relays to FLOWER_URL for staff only.

Flower itself has no accounts of its own that match ours, so it listens only where the web
process can reach it (the compose network) and runs with `--url_prefix=staff/flower`; this view
checks the Django session (staff) and relays the request. Anyone else is sent to the admin log-in.
"""

from __future__ import annotations

import urllib.error
import urllib.request

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

RELAYED_HEADERS = ("Accept", "Content-Type")


@csrf_exempt  # Flower's own forms post back to it; only staff sessions get this far
@staff_member_required
def flower(request, path: str = ""):
    if not settings.FLOWER_URL:
        return JsonResponse({"detail": "Flower is not configured (FLOWER_URL is empty)."}, status=404)
    url = f"{settings.FLOWER_URL.rstrip('/')}/staff/flower/{path}"
    if request.META.get("QUERY_STRING"):
        url += "?" + request.META["QUERY_STRING"]
    headers = {h: request.headers[h] for h in RELAYED_HEADERS if h in request.headers}
    body = request.body if request.method in ("POST", "PUT") else None
    relay = urllib.request.Request(url, data=body, headers=headers, method=request.method)
    try:
        with urllib.request.urlopen(relay, timeout=10) as upstream:  # noqa: S310 - our own configured URL
            status, content, kind = upstream.status, upstream.read(), upstream.headers.get("Content-Type")
    except urllib.error.HTTPError as exc:
        status, content, kind = exc.code, exc.read(), exc.headers.get("Content-Type")
    except OSError as exc:
        return JsonResponse({"detail": f"Flower cannot be reached: {' '.join(str(exc).split())[:200]}"}, status=502)
    return HttpResponse(content, status=status, content_type=kind or "text/html")
