import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_healthz_is_ok_when_database_and_broker_are_up_even_without_worker(client):
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok"
    assert body["database"]["ok"] and body["broker"]["ok"]
    if not body["workers"]["count"]:
        assert body["workers"]["ok"] is False
        assert "no worker" in body["workers"]["error"]


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_healthz_reports_a_dead_broker_with_503(client):
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "down"
    assert body["broker"]["ok"] is False and body["broker"]["error"]
    assert body["database"]["ok"] is True
    assert body["workers"] == {"ok": False, "count": 0, "workers": [], "error": "broker is down"}


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_pages_that_do_not_need_the_broker_keep_working(client):
    assert client.get("/").status_code == 200
    assert client.get("/accounts/login/").status_code == 200


@override_settings(LLM_BASE_URL="http://127.0.0.1:1/v1")
def test_unreachable_llm_is_reported_but_core_stays_ok(client):
    body = client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["llm"]["ok"] is False
    assert body["llm"]["error"].startswith("LLM server unreachable")
    assert "course notes" in body["llm"]["error"]


def test_without_llm_configured_the_teacher_is_in_course_notes_mode(client):
    assert client.get("/healthz").json()["llm"]["mode"] == "course-notes"


def test_status_page_shows_each_part(client):
    html = client.get("/status/").content.decode()
    for part in ("Database", "Broker", "Workers", "GPU", "Teacher model"):
        assert part in html


def test_healthz_lists_a_live_worker_with_queues_and_device(client, celery_worker_process):
    body = client.get("/healthz").json()
    mine = [w for w in body["workers"]["workers"] if w["hostname"] == celery_worker_process["hostname"]]
    assert mine, body["workers"]
    assert mine[0]["queues"] == ["default", "gpu"]
    assert mine[0]["device"]["kind"] in {"cpu", "cuda"}
    assert body["workers"]["ok"] is True
