#!/usr/bin/env bash
# dollymp-healthcheck PORT PATH EXPECT: GET http://127.0.0.1:PORT/PATH and succeed if the response
# contains EXPECT. Plain bash (/dev/tcp), so it needs no curl or wget in the Hadoop image.
set -euo pipefail
port="$1" path="$2" expect="$3"
exec 3<>"/dev/tcp/127.0.0.1/${port}"
printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n' "$path" >&3
timeout 5 cat <&3 | grep -q -- "$expect"
