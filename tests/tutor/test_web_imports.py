"""The web process must stay light: it never imports torch (only workers do)."""

import subprocess
import sys

from tests.conftest import REPO

SCRIPT = """
import sys
from tutor.startup import load_settings_or_exit
load_settings_or_exit()
import tutor.asgi
from django.urls import get_resolver
resolver = get_resolver()
resolver.url_patterns  # import every view module
import django.apps
for app in django.apps.apps.get_app_configs():
    try:
        __import__(app.name + ".admin")
    except ImportError:
        pass
print(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.") or m == "triton"))
"""


def test_the_web_process_does_not_import_torch():
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
