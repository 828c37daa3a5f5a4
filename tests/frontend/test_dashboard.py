"""The home page's daily dashboard: its figures are the review API's, for the learner who asks only."""

import re
import uuid
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from labs.models import LabRun
from quizzes.models import Card
from tutor.review.days import day_bounds, study_day
from tutor.review.services import submit_review
from tutor.teacher.models import Conversation

pytestmark = pytest.mark.django_db

UTC_ZONE = ZoneInfo("UTC")


def figure(html: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}"[^>]*>([^<]*)<', html)
    assert match, f"#{element_id} is not on the page"
    return match.group(1).strip()


def review(user, cards, *, days_ago: int, rating: int = 3) -> None:
    """Review the cards `days_ago` study days back, halfway between that day's 04:00 start and this hour.

    Not now - N days: a review a few minutes ago falls on yesterday's study day when the tests run just
    after 04:00 (UTC, the learners' zone here).
    """
    now = timezone.now()
    today = study_day(now, UTC_ZONE)
    start, _ = day_bounds(today, UTC_ZONE)
    at = start - timedelta(days=days_ago) + (now - start) / 2
    for card in cards:
        submit_review(user=user, card_id=card.pk, rating=rating, idempotency_key=uuid.uuid4().hex, reviewed_at=at)


@pytest.fixture
def history(learner, other_learner, shipped_course):
    """Ada reviewed on three days running, some cards again today, and failed a few; Grace did less."""
    cards = list(Card.objects.filter(retired=False, kind="basic").order_by("position")[:12])
    review(learner, cards[:8], days_ago=9)
    review(learner, cards[:8], days_ago=2, rating=3)
    review(learner, cards[:3], days_ago=1, rating=1)
    review(learner, cards[8:10], days_ago=0, rating=4)
    review(other_learner, cards[:2], days_ago=0, rating=2)
    return cards


def test_the_home_figures_match_the_review_api_for_the_same_learner(client, learner, history):
    client.force_login(learner)
    html = client.get("/").content.decode()
    queue = client.get("/api/review/queue/").json()["progress"]
    stats = client.get("/api/review/stats/").json()

    assert int(figure(html, "home-due")) == queue["due"]
    assert int(figure(html, "home-new")) == queue["new"]
    assert int(figure(html, "home-reviewed")) == queue["reviewed_today"] == stats["reviews_today"]
    assert int(figure(html, "home-streak")) == stats["streak_days"] == 3
    assert stats["true_retention"] is not None
    assert figure(html, "home-retention") == f"{round(stats['true_retention'] * 100)}%"
    studied = [t for t in stats["mastery"]["topics"] if t["studied"]]
    weakest = min(studied, key=lambda t: t["mastery"])
    assert f"<strong>{weakest['title']}</strong>" in html
    assert stats["methods"]["retention"] in html


def test_the_weakest_topic_links_its_section_and_a_lab_that_shows_it(client, learner, history):
    client.force_login(learner)
    html = client.get("/").content.decode()
    section = re.search(r'id="home-weakest-section" href="([^"]+)"', html).group(1)
    assert client.get(section).status_code == 200
    lab = re.search(r'id="home-weakest-lab" href="/labs/#lab-([a-z_]+)"', html)
    if lab:
        assert f'id="lab-{lab.group(1)}"' in client.get("/labs/").content.decode()


def test_a_learner_with_nothing_due_sees_when_the_next_card_is_due(client, learner, shipped_course):
    only = Card.objects.filter(reversible=False).order_by("position").first()
    Card.objects.exclude(pk=only.pk).update(retired=True)
    review(learner, Card.objects.filter(retired=False), days_ago=0, rating=4)
    client.force_login(learner)
    html = client.get("/").content.decode()
    queue = client.get("/api/review/queue/").json()
    assert queue["progress"]["due"] == 0 and queue["next_due"]
    assert 'id="continue-review"' not in html
    assert "Next card due" in html
    assert f'datetime="{queue["next_due"][:19]}' in html


def test_the_home_shows_only_the_learners_own_runs_and_conversations(client, learner, other_learner, shipped_course):
    mine = LabRun.objects.create(user=learner, experiment="launch_overhead", status="done", predicted_speedup=3)
    theirs = LabRun.objects.create(user=other_learner, experiment="attention", status="failed")
    Conversation.objects.create(user=other_learner, title="Grace's private question")
    talk = Conversation.objects.create(user=learner, title="Why fuse kernels?")
    client.force_login(learner)
    html = client.get("/").content.decode()
    assert f'href="/labs/runs/{mine.pk}/"' in html and "Done" in html
    assert f'href="/labs/runs/{theirs.pk}/"' not in html
    assert f'href="/teacher/{talk.pk}/"' in html and "Grace&#x27;s" not in html and "Grace's" not in html


def test_a_visitor_sees_the_introduction_not_a_dashboard(client, shipped_course):
    html = client.get("/").content.decode()
    assert "Create an account" in html and 'id="dashboard"' not in html
