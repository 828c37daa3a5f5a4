"""Token authentication that refuses expired tokens, answering 401 for any refused token."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from tutor.accounts import tokens


class TokenRefused(exceptions.APIException):
    """401 with `WWW-Authenticate: Token`. Not an AuthenticationFailed: DRF turns those into 403
    when session authentication comes first, as it does here."""

    status_code = 401
    default_detail = "Invalid token."
    default_code = "authentication_failed"
    auth_header = "Token"


class ExpiringTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`; a key that is unknown, revoked, rotated away or older than
    API_TOKEN_TTL_DAYS is refused with 401."""

    def authenticate(self, request):
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed as exc:  # a malformed header
            raise TokenRefused(exc.detail) from None

    def authenticate_credentials(self, key):
        token = Token.objects.select_related("user").filter(key=key).first()
        if token is None or not token.user.is_active:
            raise TokenRefused("Invalid token: it was revoked or replaced. Log in again: POST /api/auth/token/.")
        if tokens.is_expired(token):
            raise TokenRefused("Token expired. Log in again (POST /api/auth/token/) for a new one.")
        return token.user, token
