from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from tutor import views

api_urls = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include(api_urls)),
    path("api/", include("tutor.accounts.urls")),
    path("api/", include("quizzes.urls")),
    path("api/", include("tutor.review.urls")),
    path("api/", include("tutor.teacher.urls")),
    path("api/", include("labs.urls")),
    path("", include("frontend.urls")),
]
