# The DollyMP decision service (`dollymp serve`), installed from this checkout's wheel into a venv on
# Debian's Python 3.11; no Docker Hub image. Build context: the repository root.
#   docker build -f docker/service.Dockerfile -t dollymp/service:0.1.0 .
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    NUMBA_CACHE_DIR=/var/lib/dollymp/numba-cache \
    PATH=/opt/dollymp/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Extra CAs of the build host's network (docker/ca-certificates/README.md), trusted by pip.
COPY docker/ca-certificates/ /usr/local/share/ca-certificates/
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/dollymp

WORKDIR /opt/dollymp/src
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY proto/ proto/
COPY pyscheduler/ pyscheduler/

# The wheel carries the .proto and the gRPC code generated from it (setup.py), so the running
# container never needs write access to site-packages; the import checks that.
RUN pip wheel --no-deps -w /tmp/wheel . \
 && pip install "$(ls /tmp/wheel/dollymp-*.whl)[postgres]" \
 && python -c 'import pyscheduler.wire' \
 && useradd --system --uid 10001 --home-dir /var/lib/dollymp dollymp \
 && mkdir -p /var/lib/dollymp /etc/dollymp \
 && chown dollymp /var/lib/dollymp \
 && rm -rf /opt/dollymp/src /tmp/wheel

COPY docker/dollymp.toml /etc/dollymp/dollymp.toml

USER dollymp
WORKDIR /var/lib/dollymp
VOLUME ["/var/lib/dollymp"]
# 50051: gRPC for the shim and the AM helper; 8080: HTTP API (decision log, why, state, metrics).
EXPOSE 50051 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
STOPSIGNAL SIGTERM
# docker-compose.yml starts it as root through `python -m pyscheduler.deploy.shimsecret`, which makes the
# shim's shared secret on first start and then runs `dollymp serve` as the user dollymp.
ENTRYPOINT ["dollymp"]
CMD ["serve", "--config", "/etc/dollymp/dollymp.toml"]
