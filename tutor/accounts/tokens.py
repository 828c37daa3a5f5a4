"""API tokens: one per learner, made on log-in or rotation, revoked on demand, expiring after
settings.API_TOKEN_TTL_DAYS. DRF's Token model holds them; its `created` time dates them."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token


def expires_at(token: Token) -> datetime:
    return token.created + timedelta(days=settings.API_TOKEN_TTL_DAYS)


def is_expired(token: Token, *, now: datetime | None = None) -> bool:
    return (now or timezone.now()) >= expires_at(token)


@transaction.atomic
def rotate_token(*, user) -> Token:
    """A new token for `user`; the one they had stops working."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def current_token(*, user) -> Token | None:
    return Token.objects.filter(user=user).first()


def token_for_login(*, user) -> Token:
    """The learner's current token, or a new one when they have none or theirs expired."""
    token = current_token(user=user)
    if token is None or is_expired(token):
        return rotate_token(user=user)
    return token


def revoke_token(*, user) -> bool:
    """Delete the learner's token; False when there was none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
