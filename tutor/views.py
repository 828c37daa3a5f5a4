from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from tutor.health import public_health, service_health


@never_cache
@require_GET
def healthz(request):
    """200 when database and broker are up, 503 otherwise; the body says what is down (staff: and why)."""
    health = service_health()
    body = health if request.user.is_staff else public_health(health)
    return JsonResponse(body, status=200 if health["status"] == "ok" else 503)
