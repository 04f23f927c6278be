#!/bin/sh
# Run once, at the db container's first start: docker-compose.yml mounts this folder as
# /docker-entrypoint-initdb.d, which the official image and the stand-in (docker/base/) both run
# once the database POSTGRES_DB exists.
#   - The role LAB_DB_USER, password LAB_DB_PASSWORD: what the apps, the dataset loader and
#     ./test.sh --docker log in as. No superuser, and it may create no database or role; it owns
#     POSTGRES_DB, so it creates, fills and empties the posts table.
#   - The superuser POSTGRES_USER is refused over TCP: the published port admits the apps' role
#     only, and the superuser's way in is the container's own socket (docker compose exec db
#     psql -U postgres).
set -e  # not -u: an image may source this rather than run it
: "${LAB_DB_USER:?is not set (docker-compose.yml sets it)}"
: "${LAB_DB_PASSWORD:?is not set (docker-compose.yml sets it from .env)}"
psql --quiet -v ON_ERROR_STOP=1 --username="$POSTGRES_USER" --dbname="$POSTGRES_DB" \
  --set=role="$LAB_DB_USER" --set=password="$LAB_DB_PASSWORD" --set=database="$POSTGRES_DB" <<'SQL'
CREATE ROLE :"role" LOGIN PASSWORD :'password'
  NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
ALTER DATABASE :"database" OWNER TO :"role";
SQL
# pg_hba.conf takes the first line that matches: this one goes before every other.
sed -i "1i host all $POSTGRES_USER all reject" "$PGDATA/pg_hba.conf"
