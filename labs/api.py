"""Lab API: the catalog, requesting and cancelling runs, and reading one's own runs (others' are 404)."""

from __future__ import annotations

import dataclasses

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action, api_view
from rest_framework.request import Request
from rest_framework.response import Response

from labs.experiments.catalog import CATALOG
from labs.models import LabArtifact, LabRun
from labs.services import (
    cancel_run,
    catalog_for,
    headline_speedup,
    online_kinds,
    reap_stale_runs,
    request_run,
    requestable_kinds,
    roofline_for,
    target_device,
)
from tutor.errors import ErrorSerializer
from workers.device import ANY


@extend_schema(
    parameters=[
        OpenApiParameter(
            "device_kind", str, description='"any" (the default), or a kind such as h100 or h200', required=False
        )
    ],
    responses={200: serializers.DictField(), 400: ErrorSerializer},
)
@api_view(["GET"])
def experiments(request: Request) -> Response:
    """The experiments, each with its typed, bounded parameters for the device a run would land on now.

    `device_kinds` lists what may be asked for; `online` the kinds with a live worker now. A kind that is
    not online is a 400."""
    target = target_device(str(request.query_params.get("device_kind", ANY))[:64])
    return Response(
        {
            "target": {
                "kind": target.kind,
                "device_kind": target.device_kind,
                "memory_bytes": target.memory_bytes,
                "detail": target.detail,
            },
            "device_kinds": requestable_kinds(),
            "online": sorted(online_kinds()),
            "experiments": catalog_for(target),
        }
    )


class ArtifactSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()

    def get_url(self, obj) -> str:
        return reverse("lab-artifact", args=[obj.run_id, obj.name])

    class Meta:
        model = LabArtifact
        fields = ["name", "content_type", "url"]


class LabRunSerializer(serializers.ModelSerializer):
    artifacts = ArtifactSerializer(many=True, read_only=True)
    measured_speedup = serializers.SerializerMethodField()
    url = serializers.CharField(source="get_absolute_url", read_only=True)

    class Meta:
        model = LabRun
        fields = [
            "id",
            "experiment",
            "params",
            "status",
            "progress",
            "phase",
            "predicted_speedup",
            "measured_speedup",
            "device_kind",
            "queue",
            "device",
            "versions",
            "result",
            "error",
            "attempts",
            "session",
            "created_at",
            "started_at",
            "finished_at",
            "artifacts",
            "url",
        ]

    def get_measured_speedup(self, obj) -> dict | None:
        best = headline_speedup(obj.result)
        return None if best is None else {"value": best["value"], "baseline": best["baseline"]}


class LabRunListSerializer(LabRunSerializer):
    class Meta(LabRunSerializer.Meta):
        fields = [f for f in LabRunSerializer.Meta.fields if f != "result"]


class RunRequestSerializer(serializers.Serializer):
    """What the view reads; labs.services checks the experiment and its parameters (ParamError names the field)."""

    experiment = serializers.CharField(max_length=64)
    params = serializers.DictField(required=False, default=dict)
    predicted_speedup = serializers.FloatField(required=False, allow_null=True)
    device_kind = serializers.CharField(required=False, default=ANY, max_length=32)


def _param_field(f: dataclasses.Field) -> serializers.Field:
    """A catalog parameter as a serializer field, for the schema: its type, bounds, choices and length."""
    meta, default = f.metadata, f.default
    bounds = {f"{k}_value": int(meta[k]) for k in ("min", "max") if meta.get(k) is not None}

    def scalar(example, **kwargs):
        if isinstance(example, bool):
            return serializers.BooleanField(**kwargs)
        if isinstance(example, int):
            return serializers.IntegerField(**bounds, **kwargs)
        if meta.get("choices"):
            return serializers.ChoiceField(choices=list(meta["choices"]), **kwargs)
        return serializers.CharField(**kwargs)

    optional = {"required": False, "help_text": meta.get("help", "")}
    if not isinstance(default, tuple):
        return scalar(default, **optional)
    first = default[0]
    child = (
        serializers.ListField(child=scalar(first[0]), min_length=len(first), max_length=len(first))
        if isinstance(first, tuple)
        else scalar(first)
    )
    return serializers.ListField(child=child, min_length=1, max_length=meta.get("max_items"), **optional)


def _run_request_shapes() -> dict[str, type[serializers.Serializer]]:
    """One request shape per experiment: its id and its parameters, each optional (the device's default)."""
    shapes = {}
    for exp in CATALOG.values():
        name = "".join(part.title() for part in exp.id.split("_"))
        params = type(
            f"{name}ParamsSerializer",
            (serializers.Serializer,),
            {f.name: _param_field(f) for f in dataclasses.fields(exp.params_cls)},
        )
        shapes[exp.id] = type(
            f"{name}RunRequestSerializer",
            (serializers.Serializer,),
            {
                "experiment": serializers.ChoiceField(choices=[exp.id]),
                "params": params(required=False, help_text=f"{exp.title}: parameters left out take defaults."),
                "predicted_speedup": serializers.FloatField(
                    required=False, allow_null=True, min_value=0.01, max_value=10_000
                ),
                "device_kind": serializers.CharField(
                    required=False,
                    max_length=32,
                    help_text='"any" (default), or a device kind such as h100 or h200; a kind with no live '
                    "worker is refused (400) before anything is queued",
                ),
            },
        )
    return shapes


RUN_REQUEST_SCHEMA = PolymorphicProxySerializer(
    component_name="RunRequest", serializers=_run_request_shapes(), resource_type_field_name="experiment"
)


class LabRunViewSet(viewsets.ReadOnlyModelViewSet):
    """The learner's lab runs. POST queues one (validated, at most 3 active); POST {id}/cancel/ cancels a queued one."""

    queryset = LabRun.objects.none()  # for the schema (integer ids); get_queryset picks the learner's

    def get_queryset(self):
        return LabRun.objects.filter(user=self.request.user).prefetch_related("artifacts")

    def get_serializer_class(self):
        return LabRunListSerializer if self.action == "list" else LabRunSerializer

    def retrieve(self, request, *args, **kwargs):
        reap_stale_runs(user=request.user)  # a run whose worker died shows it, instead of "running" forever
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(
        request=RUN_REQUEST_SCHEMA,
        responses={201: LabRunSerializer, 400: ErrorSerializer, 429: ErrorSerializer},
        description="Queue a run. Parameters are checked against the device it will land on (400 names the "
        "field); a device_kind with no live worker is refused (400, field device_kind); with 3 runs queued or "
        "running, another is refused (429).",
    )
    def create(self, request):
        data = RunRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = request_run(user=request.user, **data.validated_data)
        return Response(LabRunSerializer(run, context={"request": request}).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: serializers.DictField()})
    @action(detail=True, methods=["get"])
    def roofline(self, request, pk=None):
        """Each kernel of this run placed against the device's measured bandwidth and compute roofs."""
        return Response(roofline_for(self.get_object()))

    @extend_schema(request=None, responses={200: LabRunSerializer, 409: ErrorSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        run = self.get_object()  # 404 for another learner's run, or an id that is no id
        run = cancel_run(user=request.user, run_id=run.pk)
        return Response(LabRunSerializer(run, context={"request": request}).data)
