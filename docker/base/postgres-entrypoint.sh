#!/bin/sh
# The stand-in PostgreSQL image's entry point: the official image's settings, from Debian's server.
# On an empty data directory it creates the cluster with POSTGRES_USER (password POSTGRES_PASSWORD,
# scram-sha-256 over TCP, trust on the local socket) and POSTGRES_DB, then serves on every
# interface of the container. The database is created in single-user mode, so no server answers
# pg_isready before the cluster is ready.
set -eu
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
: "${PGDATA:=/var/lib/postgresql/data}"
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
  echo "error: POSTGRES_PASSWORD is not set (the official image refuses this too)" >&2
  exit 1
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --pgdata="$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" \
      | postgres --single -D "$PGDATA" -j postgres >/dev/null
  fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
