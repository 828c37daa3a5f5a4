"""Account endpoints of the API; the other apps add their own under /api/."""

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, authentication_classes, parser_classes, permission_classes
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from tutor.accounts import tokens
from tutor.accounts.lockout import lockout_response
from tutor.errors import ErrorSerializer


class MeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_staff = serializers.BooleanField()


class LoginSerializer(serializers.Serializer):
    # min_length: the schema then says that blank is refused (400), as the serializer does.
    username = serializers.CharField(min_length=1, max_length=150)
    password = serializers.CharField(
        min_length=1, max_length=4096, trim_whitespace=False, style={"input_type": "password"}
    )


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send it as `Authorization: Token <token>`.")
    created = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(help_text="After this the token is refused with 401; log in again.")


class TokenInfoSerializer(serializers.Serializer):
    exists = serializers.BooleanField()
    created = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    expired = serializers.BooleanField()


def _token_body(token) -> dict:
    return {"token": token.key, "created": token.created, "expires_at": tokens.expires_at(token)}


@extend_schema(responses=MeSerializer)
@api_view(["GET"])
def me(request: Request) -> Response:
    """The signed-in learner."""
    user = request.user
    return Response(MeSerializer({"id": user.id, "username": user.username, "is_staff": user.is_staff}).data)


@extend_schema(
    request=LoginSerializer,
    responses={
        200: TokenSerializer,
        400: OpenApiResponse(ErrorSerializer, description="A field missing, empty or too long (`field` names it)."),
        401: OpenApiResponse(ErrorSerializer, description="Wrong username or password (counted towards the lockout)."),
        429: OpenApiResponse(ErrorSerializer, description="Too many failed log-ins; `Retry-After` says for how long."),
    },
    auth=[],
)
@api_view(["POST"])
@authentication_classes([])
@permission_classes([AllowAny])
@parser_classes([*api_settings.DEFAULT_PARSER_CLASSES, FormParser, MultiPartParser])
def token_login(request: Request) -> Response:
    """Log in with username and password for an API token (the current one, or a new one if it expired).

    A malformed request is 400; a wrong username or password is 401, and counts as a failed log-in, per
    account and address: after 5 in 15 minutes the answer is 429."""
    data = LoginSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    # The Django request, so that django-axes counts the failure and marks a lockout on it.
    user = authenticate(request._request, **data.validated_data)
    if user is None:
        if getattr(request._request, "axes_locked_out", False):
            return lockout_response(request._request)
        return Response(
            {"detail": "Unable to log in with this username and password."},
            status=status.HTTP_401_UNAUTHORIZED,
            headers={"WWW-Authenticate": 'Token realm="api"'},
        )
    return Response(_token_body(tokens.token_for_login(user=user)))


@extend_schema(
    methods=["GET"], responses=TokenInfoSerializer, description="Whether you have a token and when it expires."
)
@extend_schema(methods=["POST"], request=None, responses={201: TokenSerializer})
@extend_schema(methods=["DELETE"], request=None, responses={204: None})
@api_view(["GET", "POST", "DELETE"])
def token(request: Request) -> Response:
    """Your API token, for scripts (`Authorization: Token ...`). POST makes a new one and the old one
    stops working (rotation); DELETE revokes it. Tokens expire API_TOKEN_TTL_DAYS after they are made."""
    if request.method == "POST":
        return Response(_token_body(tokens.rotate_token(user=request.user)), status=status.HTTP_201_CREATED)
    if request.method == "DELETE":
        tokens.revoke_token(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
    current = tokens.current_token(user=request.user)
    return Response(
        {
            "exists": current is not None,
            "created": current.created if current else None,
            "expires_at": tokens.expires_at(current) if current else None,
            "expired": bool(current and tokens.is_expired(current)),
        }
    )
