#!/bin/sh
# The stand-in PostgreSQL image's entry point: the official image's settings, from Debian's server.
# On an empty data directory it creates the cluster with POSTGRES_USER (password POSTGRES_PASSWORD,
# scram-sha-256 over TCP, trust on the local socket) and POSTGRES_DB, runs the scripts in
# /docker-entrypoint-initdb.d (*.sh, executed if executable, else sourced; *.sql) as the official
# image does, then serves on every interface of the container. The set-up runs on a server of its
# own that listens on a private socket only, so no server answers pg_isready before the cluster
# is ready.
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
  socket="$(mktemp -d)"
  pg_ctl --pgdata="$PGDATA" --silent --wait \
    --options="-c listen_addresses='' -c unix_socket_directories=$socket" start
  export PGHOST="$socket"
  if [ "$POSTGRES_DB" != postgres ]; then
    psql --quiet -v ON_ERROR_STOP=1 --username="$POSTGRES_USER" --dbname=postgres \
      --set=database="$POSTGRES_DB" <<'SQL'
CREATE DATABASE :"database";
SQL
  fi
  for script in /docker-entrypoint-initdb.d/*; do
    # shellcheck source=/dev/null  # a script of the image's user
    case "$script" in
      *.sh) if [ -x "$script" ]; then "$script"; else . "$script"; fi ;;
      *.sql) psql --quiet -v ON_ERROR_STOP=1 --username="$POSTGRES_USER" \
               --dbname="$POSTGRES_DB" --file="$script" ;;
      *) [ ! -e "$script" ] || echo "ignoring $script (not *.sh or *.sql)" ;;
    esac
  done
  pg_ctl --pgdata="$PGDATA" --silent --wait --mode=fast stop
  unset PGHOST
  rm -rf "$socket"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
