"""Account services shared by the web UI, commands and tests."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction


@dataclass(frozen=True)
class EnsuredUser:
    username: str
    created: bool


@transaction.atomic
def ensure_user(*, username: str, password: str, staff: bool = False) -> EnsuredUser:
    """Create the user if missing; an existing user (and its password) is left untouched."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username, defaults={"is_staff": staff, "is_superuser": staff})
    if created:
        user.set_password(password)
        user.save(update_fields=["password"])
    return EnsuredUser(username=username, created=created)
