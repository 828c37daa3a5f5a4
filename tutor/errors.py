"""The one error the domain raises, and how the API turns it into a response.

Services raise `DomainError(message, field=..., status=...)` for anything a person asked for that
cannot be done: the message is written for them, `field` names the input it concerns, and
`status` is the HTTP status the API answers with. Every API error body has the same shape:
`{"detail": message, "field": field}` (field only when there is one).
"""

from __future__ import annotations

from rest_framework import serializers
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
    field = serializers.CharField(required=False)


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler, plus DomainError and the labs' ParamError in the documented error shape."""
    if isinstance(exc, ParamError):
        exc = DomainError(exc.message, exc.field)
    if isinstance(exc, DomainError):
        return Response(exc.as_dict(), status=exc.status)
    return exception_handler(exc, context)
