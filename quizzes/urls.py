from rest_framework.routers import DefaultRouter

from quizzes.api import CardViewSet, CourseViewSet

router = DefaultRouter(trailing_slash=True)
router.register("courses", CourseViewSet, basename="course")
router.register("cards", CardViewSet, basename="card")
urlpatterns = router.urls
