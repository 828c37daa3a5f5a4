"""Loading the shipped course also prepares the teacher, so the first question does not pay for it."""

import io
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_load_shipped_course_encodes_the_explanation_wordings_into_the_disk_cache():
    out = io.StringIO()
    call_command("load_shipped_course", stdout=out)
    assert "course cuda-kernels-fusion:" in out.getvalue()
    assert "explanation wordings ready" in out.getvalue()
    assert list((Path(settings.VAR_DIR) / "cache").glob("explanation-wordings-*.npy"))
