"""Page views of the web UI. They read through selectors and write through services."""

import json
import math

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from frontend.dashboard import daily_dashboard
from frontend.forms import FirstQuestionForm, LearnerSettingsForm
from quizzes import selectors
from quizzes.models import Course, Section
from tutor.accounts.lockout import wait_text
from tutor.accounts.throttles import SignupThrottle
from tutor.errors import DomainError
from tutor.health import service_health
from tutor.review import optimizer
from tutor.review.fit_guard import HOLDOUT_FRACTION, RULE
from tutor.review.models import OptimizationRun, ReviewLog, StudySession
from tutor.review.rescheduling import active_reschedule, reset_to_default_parameters, update_learner_settings
from tutor.review.services import learner_settings
from tutor.teacher import llm
from tutor.teacher.chat import start_conversation
from tutor.teacher.models import Conversation


def home(request):
    """The learner's day at a glance once logged in; what Tilewise is, before."""
    board = daily_dashboard(request.user) if request.user.is_authenticated else None
    return render(request, "frontend/home.html", {"board": board})


@require_http_methods(["GET", "POST"])
def signup(request):
    """Create an account (the password goes through AUTH_PASSWORD_VALIDATORS); throttled per address."""
    if request.user.is_authenticated:
        return redirect("home")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST":
        throttle = SignupThrottle()
        if not throttle.allow_request(request, None):
            seconds = math.ceil(throttle.wait() or 1)
            context = {
                "form": form,
                "throttled": f"Too many sign-ups from your address. Try again in {wait_text(seconds)}.",
            }
            response = render(request, "registration/signup.html", context, status=429)
            response["Retry-After"] = str(seconds)
            return response
        if form.is_valid():
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


def status(request):
    """The health of every part, for people (the same data as /healthz: details for staff only)."""
    return render(request, "frontend/status.html", {"health": service_health(), "details": request.user.is_staff})


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


@login_required
def review(request):
    return render(request, "frontend/review.html")


@login_required
def stats(request):
    return render(request, "frontend/stats.html")


@login_required
def sessions(request):
    rows = StudySession.objects.filter(user=request.user).annotate(
        review_count=Count("reviews", filter=Q(reviews__undone_at__isnull=True))
    )[:100]
    return render(request, "frontend/sessions.html", {"sessions": rows})


@login_required
def session(request, pk: int):
    obj = StudySession.objects.filter(user=request.user, pk=pk).first()
    if obj is None:
        raise Http404("No such session.")
    reviews = obj.reviews.select_related("card").order_by("reviewed_at", "id")
    return render(request, "frontend/session.html", {"session": obj, "reviews": reviews})


@login_required
@require_http_methods(["GET", "POST"])
def settings_page(request):
    obj = learner_settings(request.user)
    form = LearnerSettingsForm(request.POST or None, instance=obj)
    if request.method == "POST" and form.is_valid():
        job = update_learner_settings(user=request.user, changes=form.cleaned_data)
        messages.success(request, f"Settings saved; re-scheduling your {job.total} cards from your review log.")
        return redirect("settings")
    runs = list(OptimizationRun.objects.filter(user=request.user)[:5])
    labels = (("fitted", "Fitted on earlier reviews"), ("current", "In use then"), ("defaults", "FSRS defaults"))
    for run in runs:
        run.curve_json = json.dumps(run.curve) if run.curve else ""
        scores = (run.evaluation or {}).get("metrics", {})
        run.scores = [(label, scores[key]) for key, label in labels if key in scores]
    return render(
        request,
        "frontend/settings.html",
        {
            "form": form,
            "runs": runs,
            "min_reviews": optimizer.MIN_REVIEWS,
            "holdout_pct": round(HOLDOUT_FRACTION * 100),
            "review_count": ReviewLog.objects.filter(user=request.user, undone_at__isnull=True).count(),
            "rescheduling": active_reschedule(request.user),
            "uses_fitted": bool(obj.parameters),
            "rule": RULE,
        },
    )


@login_required
@require_POST
def reset_parameters(request):
    job = reset_to_default_parameters(user=request.user)
    messages.success(request, f"Back to the FSRS default parameters; re-scheduling your {job.total} cards.")
    return redirect("settings")


@login_required
@require_POST
def optimize(request):
    try:
        run = optimizer.request_optimization(user=request.user)
    except DomainError as exc:  # one already queued or running
        messages.error(request, exc.message)
        return redirect("settings")
    if run.status == OptimizationRun.Status.FAILED:
        messages.error(request, run.message)
    else:
        messages.info(request, "Fitting queued; refresh this page in a minute to see the result.")
    return redirect("settings")


@login_required
def teacher(request):
    conversations = Conversation.objects.filter(user=request.user).select_related("card")[:50]
    return render(
        request,
        "frontend/teacher_list.html",
        {
            "conversations": conversations,
            "form": FirstQuestionForm(),
            "llm_mode": llm.llm_configured(),
            "llm_model": llm.model_name(),
        },
    )


FIRST_QUESTION_KEY = "teacher-first-question"


@login_required
@require_POST
def teacher_new(request):
    """Start a conversation; with a question, the chat page asks it at once (it streams from there)."""
    form = FirstQuestionForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(message for errors in form.errors.values() for message in errors))
        return redirect("teacher")
    question = form.cleaned_data["question"]
    conversation = start_conversation(user=request.user, card=form.cleaned_data["card"])
    if question:
        request.session[FIRST_QUESTION_KEY] = {"conversation": conversation.pk, "question": question}
    return redirect("teacher-chat", pk=conversation.pk)


@login_required
def teacher_chat(request, pk: int):
    conversation = Conversation.objects.filter(user=request.user, pk=pk).select_related("card").first()
    if conversation is None:
        raise Http404("No such conversation.")
    pending = request.session.get(FIRST_QUESTION_KEY)
    first_question = ""
    if pending and pending.get("conversation") == conversation.pk:
        first_question = pending["question"]
        del request.session[FIRST_QUESTION_KEY]
    return render(
        request,
        "frontend/teacher_chat.html",
        {"conversation": conversation, "turns": conversation.turns.all(), "first_question": first_question},
    )


def _default_text(value) -> str:
    """A parameter default as the text the form (and labs.experiments' parser) takes."""
    if isinstance(value, list | tuple):
        return ",".join("x".join(map(str, v)) if isinstance(v, list | tuple) else str(v) for v in value)
    return "" if value is None else str(value)


@login_required
def labs(request):
    from labs import services
    from labs.models import LabRun

    target = services.target_device()
    workers = services.lab_workers()
    online = services.online_kinds(workers)
    experiments = services.catalog_for(target)
    for exp in experiments:
        exp["prediction"] = services.PREDICTIONS.get(exp["id"], "")
        for p in exp["params"]:
            p["default_text"] = _default_text(p.get("default"))
            p.setdefault("type", "text")
    course = Course.objects.order_by("pk").first()
    return render(
        request,
        "frontend/labs.html",
        {
            "experiments": experiments,
            "target": target,
            "device_kinds": [
                {"kind": k, "online": k == "any" or k in online} for k in services.requestable_kinds(workers)
            ],
            "max_active": services.MAX_ACTIVE_RUNS,
            "course_slug": course.slug if course else "",
            "runs": LabRun.objects.filter(user=request.user)[:30],
        },
    )


@login_required
def lab_run(request, pk: int):
    from labs.experiments.catalog import CATALOG
    from labs.models import LabRun

    run = LabRun.objects.filter(user=request.user, pk=pk).first()
    if run is None:
        raise Http404("No such lab run.")
    exp = CATALOG.get(run.experiment)
    return render(request, "frontend/lab_run.html", {"run": run, "title": exp.title if exp else run.experiment})


@login_required
def lab_artifact(request, pk: int, name: str):
    from django.http import FileResponse

    from labs.models import LabArtifact

    artifact = LabArtifact.objects.filter(run__user=request.user, run_id=pk, name=name).first()
    if artifact is None:
        raise Http404("No such artifact.")
    return FileResponse(artifact.file.open("rb"), content_type=artifact.content_type, filename=artifact.name)


@login_required
@require_POST
def lab_explain(request, pk: int):
    from labs.models import LabRun

    run = LabRun.objects.filter(user=request.user, pk=pk).first()
    if run is None:
        raise Http404("No such lab run.")
    conversation = start_conversation(
        user=request.user, lab_run_id=run.pk, title=f"Explain my {run.experiment} run #{run.pk}"
    )
    return redirect(f"{reverse('teacher-chat', args=[conversation.pk])}?ask=explain")


@login_required
def staff_fleet(request):
    """Operators' view of the GPU fleet: workers, their device, the run each is on, and the queues. Staff only."""
    if not request.user.is_staff:
        raise Http404("No such page.")
    from labs.fleet import fleet_overview

    return render(request, "frontend/staff_fleet.html", {"fleet": fleet_overview()})
