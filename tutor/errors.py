"""The one error the domain raises, and how the API turns every error into the same JSON shape.

Services raise `DomainError(message, field=..., status=...)` for anything a person asked for that
cannot be done: the message is written for them, `field` names the input it concerns, and
`status` is the HTTP status the API answers with. Every API error body has the same shape:
`{"detail": message, "field": field}` (field only when there is one); a serializer's validation
errors add `"errors"`, DRF's original field-by-field dict. Under /api/ even the errors Django
answers itself (an unknown path, a method not allowed, a failed CSRF check) come back in that shape.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.utils.decorators import sync_only_middleware
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler

from labs.experiments.params import ParamError


class DomainError(Exception):
    def __init__(self, message: str, field: str | None = None, *, status: int = 400):
        super().__init__(message)
        self.message = message
        self.field = field
        self.status = status

    def as_dict(self) -> dict[str, str]:
        return {"detail": self.message, **({"field": self.field} if self.field else {})}


class ErrorSerializer(serializers.Serializer):
    """The error shape, for the API schema."""

    detail = serializers.CharField()
    field = serializers.CharField(required=False, help_text="The input the error concerns, when there is one.")
    errors = serializers.JSONField(
        required=False, help_text="Validation errors only: every message, by field (DRF's own shape)."
    )


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler, plus DomainError, the labs' ParamError and validation errors in the documented shape."""
    if isinstance(exc, ParamError):
        exc = DomainError(exc.message, exc.field)
    if isinstance(exc, DomainError):
        return Response(exc.as_dict(), status=exc.status)
    response = exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.ValidationError):
        response.data = validation_error_body(response.data)
    return response


def validation_error_body(errors) -> dict:
    """DRF's validation errors as {"detail": first message, "field": its top-level field, "errors": all}."""
    field, message = _first_error(errors)
    body = {"detail": message or "Invalid input."}
    if field and field != "non_field_errors":
        body["field"] = field
    body["errors"] = errors
    return body


def _first_error(errors, field: str | None = None) -> tuple[str | None, str | None]:
    if isinstance(errors, dict):
        for key, value in errors.items():
            found = _first_error(value, field if field is not None else str(key))
            if found[1]:
                return found
        return field, None
    if isinstance(errors, list):
        for value in errors:
            found = _first_error(value, field)
            if found[1]:
                return found
        return field, None
    return field, str(errors)


# What Django itself answers (outside DRF) for these statuses, in words for the JSON body.
_DETAILS = {
    400: "Bad request.",
    403: "Forbidden (not signed in, or the CSRF check failed).",
    404: "Not found.",
    413: "The request is too large.",
}


def _as_json(request, response):
    if (
        not request.path.startswith("/api/")
        or not 400 <= response.status_code < 500
        or response.streaming
        or response.get("Content-Type", "").startswith("application/json")
    ):
        return response
    if response.status_code == 405:
        detail = f'Method "{request.method}" not allowed.'
    else:
        detail = _DETAILS.get(response.status_code, f"{response.reason_phrase}.")
    shaped = JsonResponse({"detail": detail}, status=response.status_code)
    for header, value in response.items():  # keep Allow, Retry-After and what other middleware added
        if header.lower() not in ("content-type", "content-length"):
            shaped[header] = value
    shaped.cookies = response.cookies
    return shaped


@sync_only_middleware
def api_errors_as_json(get_response):
    """Every 4xx under /api/ is JSON with `detail`, including the ones Django answers outside DRF (an unknown
    path, a method not allowed, a failed CSRF check): it sits inside the other middleware, so it sees those.
    An address with a NUL in its path or query is refused with a 400 before any view looks it up.

    Sync only, on purpose: under ASGI, Django runs each async-capable MiddlewareMixin around a sync view with
    a thread switch per hook. A sync-only middleware this deep makes everything outside it run in one thread
    (about 1-2 ms less server CPU per review in `python -m tutor.review.bench load`). Async views (the
    teacher's stream) still run on the event loop.
    """

    def middleware(request):
        if request.path.startswith("/api/") and (
            "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", "")
        ):
            # PostgreSQL cannot compare text with a NUL in it: refused here, not a server error in a lookup.
            return JsonResponse({"detail": "The address may not contain NUL characters."}, status=400)
        return _as_json(request, get_response(request))

    return middleware


def document_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook: every operation documents the error shape for the 4xx it can answer
    (400 where it takes input, 403 where it needs a login, 401 where it takes a token, 404 where the path names
    a row or a list has pages), unless it already does."""
    error = {"$ref": "#/components/schemas/Error"}
    result.setdefault("components", {}).setdefault("schemas", {})
    result["components"]["schemas"].setdefault(
        "Error",
        {
            "type": "object",
            "properties": {"detail": {"type": "string"}, "field": {"type": "string"}, "errors": {}},
            "required": ["detail"],
        },
    )
    for path, operations in result.get("paths", {}).items():
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            codes = []
            params = operation.get("parameters", [])
            if "requestBody" in operation or any(p.get("in") == "query" for p in params):
                codes.append("400")
            if operation.get("security") and {} not in operation["security"]:
                codes.append("403")
            if any("tokenAuth" in scheme for scheme in operation.get("security", [])):
                codes.append("401")  # an expired, replaced or revoked token
            # A paginated list answers 404 for a page past its end ("Invalid page.").
            if "{" in path or any(p.get("in") == "query" and p.get("name") == "page" for p in params):
                codes.append("404")
            for code in codes:
                operation["responses"].setdefault(
                    code, {"content": {"application/json": {"schema": error}}, "description": ""}
                )
    return result
