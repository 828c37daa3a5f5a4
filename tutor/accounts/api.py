"""Account endpoints of the API; the other apps add their own under /api/."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response


class MeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_staff = serializers.BooleanField()


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


@extend_schema(responses=MeSerializer)
@api_view(["GET"])
def me(request: Request) -> Response:
    """The signed-in learner."""
    user = request.user
    return Response(MeSerializer({"id": user.id, "username": user.username, "is_staff": user.is_staff}).data)


@extend_schema(request=None, responses=TokenSerializer)
@api_view(["POST"])
def token(request: Request) -> Response:
    """The learner's API token (created on first call), for scripts: `Authorization: Token ...`."""
    obj, _ = Token.objects.get_or_create(user=request.user)
    return Response({"token": obj.key})
