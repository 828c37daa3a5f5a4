"""Course content must be written in the project's own words (shared/tools/originality.py)."""

import subprocess
import sys

import pytest

from tests.conftest import REPO

TOOL = REPO.parent / "shared" / "tools" / "originality.py"


@pytest.mark.skipif(not TOOL.exists(), reason="shared/tools/originality.py is not beside the repo")
def test_course_content_does_not_repeat_the_reference_material():
    result = subprocess.run(
        [sys.executable, str(TOOL), "quizzes/content"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout[-3000:]
