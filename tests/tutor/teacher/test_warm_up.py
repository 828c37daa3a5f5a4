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
    assert "explanation wordings," in out.getvalue() and "lesson quotes ready" in out.getvalue()
    cache = Path(settings.VAR_DIR) / "cache"
    kinds = ("explanation-wordings", "explanation-answers", "lesson-windows", "lesson-passages", "intent-exemplars")
    for kind in kinds:
        assert list(cache.glob(f"{kind}-*.npy")), kind


def test_after_one_text_changes_only_that_text_is_encoded_again(monkeypatch, tmp_path):
    """An admin's edit to one explanation must not make the next learner wait for the whole course's vectors."""
    import numpy as np

    from tutor.teacher import embeddings, minilm

    monkeypatch.setattr(settings, "VAR_DIR", tmp_path)
    encoded: list[str] = []
    real_encode = minilm.encode

    def counting_encode(texts, *args, **kwargs):
        encoded.extend(texts)
        return real_encode(texts, *args, **kwargs)

    monkeypatch.setattr(minilm, "encode", counting_encode)
    before = ["What is a warp?", "Why fuse kernels?", "What is HBM?"]
    first = embeddings.cached_vectors(before, "test-texts")
    after = ["What is a warp?", "Why do we fuse kernels at all?", "What is HBM?"]
    second = embeddings.cached_vectors(after, "test-texts")
    assert encoded == [*before, "Why do we fuse kernels at all?"]
    assert np.allclose(first[0], second[0]) and np.allclose(second[1], real_encode([after[1]])[0], atol=1e-5)
    assert len(list(tmp_path.glob("cache/test-texts-*.npy"))) == 2
    # Only the live texts are held in memory: the edited-away wording is not kept.
    assert set(embeddings._last[("test-texts", "")]) == set(after)
