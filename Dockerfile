# Two images from one file:
#   app: web and the CPU worker (python:3.11-slim, CPU build of torch for CPU labs)
#   gpu: the GPU lab worker (PyTorch's CUDA runtime image, which brings torch, triton and CUDA)
FROM python:3.11-slim AS app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 TILEWISE_VAR_DIR=/var/lib/tilewise
WORKDIR /srv/tilewise
COPY pyproject.toml README.md ./
COPY tutor tutor
COPY quizzes quizzes
COPY labs labs
COPY workers workers
COPY frontend frontend
COPY manage.py Procfile ./
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu ".[labs,ops]" \
 && DEBUG=true SECRET_KEY=build-only-key-not-used-at-runtime-0123456789abcdefghij python manage.py collectstatic --no-input
RUN useradd --system --home /var/lib/tilewise tilewise && mkdir -p /var/lib/tilewise \
 && chown tilewise /var/lib/tilewise
USER tilewise
EXPOSE 8000

FROM pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime AS gpu
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 TILEWISE_VAR_DIR=/var/lib/tilewise
WORKDIR /srv/tilewise
COPY --from=app /srv/tilewise /srv/tilewise
# torch and triton come from the base image; install the rest without replacing them.
RUN pip install --no-cache-dir . && mkdir -p /var/lib/tilewise
