#!/usr/bin/env bash
# Initialise $PGDATA on first start (user, password, database from the environment), then run the
# server in the foreground on every address with password authentication.
set -euo pipefail
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required: the password of the decision-log database user}"
user="${POSTGRES_USER:-postgres}" db="${POSTGRES_DB:-${POSTGRES_USER:-postgres}}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"; printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --encoding=UTF8 --locale=C.UTF-8 --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    postgres --single -D "$PGDATA" -c listen_addresses='' postgres <<<"CREATE DATABASE \"$db\" OWNER \"$user\";" >/dev/null
  fi
  echo "database system is initialised ($db, user $user)"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
