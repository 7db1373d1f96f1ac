# syntax=docker/dockerfile:1
# The DollyMP decision service (`dollymp serve`) from the Python package. Build context: the repo root.
#   docker build -f docker/service.Dockerfile -t dollymp/service:0.1.0 .
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NUMBA_CACHE_DIR=/var/lib/dollymp/numba-cache

WORKDIR /opt/dollymp/src
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY proto/ proto/
COPY pyscheduler/ pyscheduler/

# Install (with the PostgreSQL driver). The wheel pip builds carries the .proto and the gRPC code
# generated from it (setup.py), so the running container never needs write access to site-packages;
# the import checks that.
RUN pip install '.[postgres]' \
 && python -c 'import pyscheduler.wire' \
 && useradd --system --uid 10001 --home-dir /var/lib/dollymp dollymp \
 && mkdir -p /var/lib/dollymp /etc/dollymp \
 && chown dollymp /var/lib/dollymp \
 && rm -rf /opt/dollymp/src

COPY docker/dollymp.toml /etc/dollymp/dollymp.toml

USER dollymp
WORKDIR /var/lib/dollymp
VOLUME ["/var/lib/dollymp"]
# 50051: gRPC for the shim and the AM helper; 8080: HTTP API (decision log, why, state, metrics).
EXPOSE 50051 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["dollymp"]
CMD ["serve", "--config", "/etc/dollymp/dollymp.toml"]
