import pytest

pytestmark = pytest.mark.django_db


def test_course_page_lists_lessons_and_sections(shipped_course, client):
    html = client.get("/learn/cuda-kernels-fusion/").content.decode()
    for lesson in shipped_course.lessons.all():
        assert lesson.title in html
    assert "/learn/cuda-kernels-fusion/flashattention/" in html


def test_section_page_renders_the_notes(shipped_course, client):
    section = shipped_course.sections.get(slug="flashattention")
    html = client.get(section.get_absolute_url()).content.decode()
    assert section.body_html in html


def test_unknown_section_is_404(shipped_course, client):
    assert client.get("/learn/cuda-kernels-fusion/nope/").status_code == 404
