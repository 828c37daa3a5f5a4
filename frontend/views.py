"""Page views of the web UI. They read through selectors and write through services."""

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from quizzes import selectors
from quizzes.models import Course, Section
from tutor.health import service_health


def home(request):
    return render(request, "frontend/home.html")


@require_http_methods(["GET", "POST"])
def signup(request):
    if request.user.is_authenticated:
        return redirect("home")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


def status(request):
    """The health of every part, for people (the same data as /healthz)."""
    return render(request, "frontend/status.html", {"health": service_health()})


def courses(request):
    return render(request, "frontend/courses.html", {"courses": selectors.courses_with_counts()})


def course(request, course: str):
    try:
        obj = selectors.course_outline(course)
    except Course.DoesNotExist:
        raise Http404("No such course.") from None
    return render(request, "frontend/course.html", {"course": obj})


def section(request, course: str, section: str):
    try:
        obj = selectors.section_with_cards(course, section)
    except Section.DoesNotExist:
        raise Http404("No such section.") from None
    return render(request, "frontend/section.html", {"section": obj})
