from django.contrib.auth import views as auth_views
from django.urls import path

from frontend import views

urlpatterns = [
    path("", views.home, name="home"),
    path("status/", views.status, name="status"),
    path("review/", views.review, name="review"),
    path("stats/", views.stats, name="stats"),
    path("sessions/", views.sessions, name="sessions"),
    path("sessions/<int:pk>/", views.session, name="session"),
    path("settings/", views.settings_page, name="settings"),
    path("settings/optimize/", views.optimize, name="optimize"),
    path("settings/reset-parameters/", views.reset_parameters, name="reset-parameters"),
    path("labs/", views.labs, name="labs"),
    path("staff/fleet/", views.staff_fleet, name="staff-fleet"),
    path("labs/runs/<int:pk>/", views.lab_run, name="lab-run"),
    path("labs/runs/<int:pk>/artifacts/<str:name>", views.lab_artifact, name="lab-artifact"),
    path("labs/runs/<int:pk>/explain/", views.lab_explain, name="lab-explain"),
    path("teacher/", views.teacher, name="teacher"),
    path("teacher/new/", views.teacher_new, name="teacher-new"),
    path("teacher/<int:pk>/", views.teacher_chat, name="teacher-chat"),
    path("learn/", views.courses, name="courses"),
    path("learn/<slug:course>/", views.course, name="course"),
    path("learn/<slug:course>/<slug:section>/", views.section, name="section"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
