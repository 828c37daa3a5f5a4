"""Page views of the web UI. They read through selectors and write through services."""

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

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
