"""docker-compose.yml is not runnable here (no Docker engine): check its structure instead."""

import shlex
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import REPO


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def test_compose_has_every_service(compose):
    assert set(compose["services"]) == {"postgres", "redis", "web", "worker", "gpu-worker", "flower", "llm"}


def test_every_service_has_a_healthcheck(compose):
    for name, service in compose["services"].items():
        assert "healthcheck" in service, name


def test_app_services_use_postgres_and_redis_and_require_a_secret(compose):
    for name in ("web", "worker", "gpu-worker"):
        env = compose["services"][name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://"), name
        assert env["REDIS_URL"] == "redis://redis:6379/0", name
        assert ":?" in env["SECRET_KEY"], name
        assert env["DEBUG"] == "false", name


def test_gpu_worker_runs_one_job_at_a_time_on_a_reserved_gpu(compose):
    service = compose["services"]["gpu-worker"]
    argv = service["command"]
    assert argv[argv.index("--queues") + 1] == "gpu"
    assert argv[argv.index("--concurrency") + 1] == "1"
    assert argv[argv.index("--prefetch-multiplier") + 1] == "1"
    devices = service["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and devices[0]["capabilities"] == ["gpu"]


def test_gpu_worker_keeps_its_compile_caches_in_a_volume(compose):
    service = compose["services"]["gpu-worker"]
    assert service["environment"]["COMPILE_CACHE_DIR"] == "/var/lib/tilewise/cache"
    assert "compilecache:/var/lib/tilewise/cache" in service["volumes"]
    assert "compilecache" in compose["volumes"]


def test_flower_publishes_no_port_and_is_served_behind_the_admin_login(compose):
    flower = compose["services"]["flower"]
    assert "ports" not in flower
    assert "--url_prefix=staff/flower" in flower["command"]
    assert compose["services"]["web"]["environment"]["FLOWER_URL"] == "http://flower:5555"


def test_cpu_worker_takes_the_default_queue_only(compose):
    argv = compose["services"]["worker"]["command"]
    assert argv[argv.index("--queues") + 1] == "default"


def test_llm_server_is_an_optional_profile(compose):
    assert compose["services"]["llm"]["profiles"] == ["llm"]


def test_data_lives_in_volumes(compose):
    assert {"pgdata", "redisdata", "media"} <= set(compose["volumes"])
    assert "pgdata:/var/lib/postgresql/data" in compose["services"]["postgres"]["volumes"]


def test_docker_compose_config_validates_when_the_client_can():
    docker = shutil.which("docker")
    if not docker or subprocess.run([docker, "compose", "version"], capture_output=True).returncode:
        pytest.skip("docker compose client not installed")
    result = subprocess.run(
        shlex.split(f"{docker} compose -f docker-compose.yml config --quiet"),
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"SECRET_KEY": "x" * 40, "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
