from django.urls import path
from rest_framework.routers import DefaultRouter

from tutor.teacher import views

router = DefaultRouter(trailing_slash=True)
router.register("teacher/conversations", views.ConversationViewSet, basename="conversation")

urlpatterns = [
    path("teacher/conversations/<int:pk>/ask/", views.ask, name="api-teacher-ask"),
] + router.urls
