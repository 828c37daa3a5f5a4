from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from tutor.health import service_health


@never_cache
@require_GET
def healthz(request):
    """200 when database and broker are up, 503 otherwise; the body says what is down."""
    health = service_health()
    return JsonResponse(health, status=200 if health["status"] == "ok" else 503)
