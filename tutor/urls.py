from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from labs.metrics import metrics
from tutor import views
from tutor.flower_proxy import flower

api_urls = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Swagger UI's script is served as a file (the split view); its page keeps a <style> block and
    # data: images, allowed on this page only.
    path(
        "docs/",
        csp_update({"style-src": [UNSAFE_INLINE], "img-src": ["data:"]})(
            SpectacularSwaggerSplitView.as_view(url_name="api-schema")
        ),
        name="api-docs",
    ),
]

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("staff/flower/", flower, name="flower"),
    path("staff/flower/<path:path>", flower),
    path("admin/", admin.site.urls),
    path("api/", include(api_urls)),
    path("api/", include("tutor.accounts.urls")),
    path("api/", include("quizzes.urls")),
    path("api/", include("tutor.review.urls")),
    path("api/", include("tutor.teacher.urls")),
    path("api/", include("labs.urls")),
    path("", include("frontend.urls")),
]
