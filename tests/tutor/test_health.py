import json

import pytest
from django.conf import settings
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_healthz_is_ok_when_database_and_broker_are_up_even_without_worker(staff_client):
    response = staff_client.get("/healthz")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok"
    assert body["database"]["ok"] and body["broker"]["ok"]
    if not body["workers"]["count"]:
        assert body["workers"]["ok"] is False
        assert "no worker" in body["workers"]["error"]


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_healthz_reports_a_dead_broker_with_503(staff_client):
    response = staff_client.get("/healthz")
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
def test_unreachable_llm_is_reported_but_core_stays_ok(staff_client):
    body = staff_client.get("/healthz").json()
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


def test_healthz_lists_a_live_worker_with_queues_device_and_state(staff_client, celery_worker_process):
    body = staff_client.get("/healthz").json()
    mine = [w for w in body["workers"]["workers"] if w["hostname"] == celery_worker_process["hostname"]]
    assert mine, body["workers"]
    kind = mine[0]["device"]["device_kind"]
    assert mine[0]["queues"] == ["default", "gpu", f"gpu.{kind}"]  # its device kind's queue, added at start-up
    assert mine[0]["device"]["kind"] in {"cpu", "cuda"}
    assert {"uuid", "pci_bus_id"} <= set(mine[0]["device"])
    assert mine[0]["state"] == "idle" and mine[0]["current"] is None
    assert body["workers"]["ok"] is True


def test_anonymous_healthz_says_what_is_up_without_addresses_hosts_or_errors(client, celery_worker_process):
    body = client.get("/healthz").json()
    # What CI's smoke test and monitors read stays readable without logging in.
    assert body["status"] == "ok" and body["database"]["ok"] and body["broker"]["ok"] and body["workers"]["ok"]
    assert body["workers"]["count"] >= 1 and body["down"] == []
    text = json.dumps(body)
    assert celery_worker_process["hostname"] not in text
    assert settings.REDIS_URL not in text and "redis://" not in text
    assert "workers" not in body["workers"] and "url" not in body["broker"]


@override_settings(REDIS_URL="redis://:hunter2-pw@127.0.0.1:1/0", LLM_BASE_URL="http://10.1.2.3:1/v1")
def test_anonymous_healthz_names_the_parts_that_are_down_but_not_why(client):
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "down" and body["broker"] == {"ok": False}
    assert set(body["down"]) == {"broker", "workers", "llm"}
    text = json.dumps(body)
    for secret in ("hunter2", "127.0.0.1", "10.1.2.3"):
        assert secret not in text
    assert all("error" not in body[part] for part in ("database", "broker", "workers", "llm"))


def test_learners_who_are_not_staff_get_the_public_health_too(learner_client):
    body = learner_client.get("/healthz").json()
    assert "url" not in body["broker"] and "vendor" not in body["database"]


@override_settings(REDIS_URL="redis://:hunter2-pw@127.0.0.1:1/0", LLM_BASE_URL="http://10.1.2.3:1/v1")
def test_status_page_shows_addresses_and_errors_to_staff_only(client, staff):
    html = client.get("/status/").content.decode()
    assert "down" in html
    for secret in ("127.0.0.1", "10.1.2.3", "hunter2", "redis://"):
        assert secret not in html
    client.force_login(staff)
    html = client.get("/status/").content.decode()
    assert "127.0.0.1:1/0" in html and "LLM server unreachable" in html
    assert "hunter2" not in html  # the password in the broker URL stays hidden even from staff
