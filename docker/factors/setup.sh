#!/usr/bin/env bash
# The factor experiment's fixtures (docs/docker.md, "Why --docker found smaller ratios"), as
# root with a Docker engine running: the arms' images (docker-compose.yml's, on the base images
# PYTHON_IMAGE/POSTGRES_IMAGE name), a bridge network of its own, PostgreSQL on it at 172.30.0.2
# pinned beside the load generator with the lab's dataset, and the local arms' environments on
# both interpreters. `setup.sh --remove` takes the network and database away again.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/common.sh"
cd "$FACTORS_REPOSITORY"
say() { echo "[factors] $*"; }
fail() { echo "[factors] error: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "run it as root (it starts containers and pins the machine's PostgreSQL)"
docker info >/dev/null 2>&1 || fail "no Docker engine answers (docs/docker.md: starting dockerd)"
# A database container of an earlier setup that a reboot stopped is started again.
start_database() {  # NAME, then docker run's options and arguments
  local name="$1"; shift
  if ! docker inspect "$name" >/dev/null 2>&1; then
    docker run --detach --name "$name" --label pydantic-lab.factors=1 "$@" >/dev/null
  elif [ "$(docker inspect --format '{{.State.Running}}' "$name")" != true ]; then
    docker start "$name" >/dev/null
  fi
}

if [ "${1:-}" = --remove ]; then
  docker ps --all --quiet --filter label=pydantic-lab.factors=1 | xargs -r docker rm --force >/dev/null
  if psql "${FACTORS_SYSTEM_DATABASE_URL%/*}/postgres" -tAc "select 1" >/dev/null 2>&1; then
    psql "${FACTORS_SYSTEM_DATABASE_URL%/*}/postgres" -tAc "drop database if exists lab_factors" \
      >/dev/null 2>&1 || true
    data_directory="$(psql "${FACTORS_SYSTEM_DATABASE_URL%/*}/postgres" -tAc "show data_directory")"
    taskset -apc "$FACTORS_ALL_CPUS" "$(head -1 "$data_directory/postmaster.pid")" >/dev/null || true
  fi
  docker rm --force "$FACTORS_DATABASE" "$FACTORS_HOST_DATABASE" "$FACTORS_WEIGHTED_DATABASE" \
    >/dev/null 2>&1 || true
  docker network rm "$FACTORS_NETWORK" >/dev/null 2>&1 || true
  say "removed the network, the databases (and lab_factors from the machine's PostgreSQL) and any arm left"
  exit 0
fi

source scripts/bootstrap.sh >/dev/null   # uv, and the environments the dataset loader runs in
# The arms' images as docker-compose.yml builds them (set PYTHON_IMAGE/POSTGRES_IMAGE to the
# stand-ins of docker/base/build.sh where Docker Hub is out of reach, as for the compose path).
if ! { factor_image v1 >/dev/null && factor_image v2 >/dev/null; }; then
  say "images: compose build app_v1 app_v2"
  compose=(docker-compose); docker compose version >/dev/null 2>&1 && compose=(docker compose)
  "${compose[@]}" build app_v1 app_v2 >/dev/null
fi
say "images: $(factor_image v1) $(factor_image v2)"

docker network inspect "$FACTORS_NETWORK" >/dev/null 2>&1 \
  || docker network create --subnet 172.30.0.0/24 "$FACTORS_NETWORK" >/dev/null
docker image inspect "$FACTORS_POSTGRES_IMAGE" >/dev/null 2>&1 \
  || fail "no image $FACTORS_POSTGRES_IMAGE: build the stand-ins (docker/base/build.sh) or set POSTGRES_IMAGE"
credentials=(--env POSTGRES_USER=lab --env POSTGRES_PASSWORD=lab --env POSTGRES_DB=lab)
start_database "$FACTORS_DATABASE" --network "$FACTORS_NETWORK" --ip 172.30.0.2 \
  --cpuset-cpus "$FACTORS_LOAD_CPU" "${credentials[@]}" "$FACTORS_POSTGRES_IMAGE"
start_database "$FACTORS_HOST_DATABASE" --network host --cpuset-cpus "$FACTORS_LOAD_CPU" \
  "${credentials[@]}" "$FACTORS_POSTGRES_IMAGE" -c listen_addresses=127.0.0.1 -p 55433
start_database "$FACTORS_WEIGHTED_DATABASE" --network host --cpuset-cpus "$FACTORS_LOAD_CPU" \
  --cpu-shares 10240 "${credentials[@]}" "$FACTORS_POSTGRES_IMAGE" \
  -c listen_addresses=127.0.0.1 -p 55434
ready() {
  docker exec "$FACTORS_DATABASE" pg_isready -h 127.0.0.1 -U lab -d lab >/dev/null 2>&1 \
    && docker exec "$FACTORS_HOST_DATABASE" pg_isready -h 127.0.0.1 -p 55433 -U lab -d lab \
         >/dev/null 2>&1 \
    && docker exec "$FACTORS_WEIGHTED_DATABASE" pg_isready -h 127.0.0.1 -p 55434 -U lab -d lab \
         >/dev/null 2>&1
}
for _ in $(seq 60); do ready && break; sleep 1; done
ready || fail "the database containers are not ready after 60 s (docker logs $FACTORS_DATABASE)"
for url in "$FACTORS_DATABASE_URL" "$FACTORS_HOST_DATABASE_URL" "$FACTORS_WEIGHTED_DATABASE_URL"; do
  say "database: $url (CPU $FACTORS_LOAD_CPU); loading the dataset"
  DATABASE_URL="$url" loadtest/.venv/bin/python -m loadtest dataset >/dev/null
done

# Debian's own PostgreSQL, if one answers: its database, the dataset, and its server moved to the
# load CPU as the lab pins its own (new connections fork from the postmaster and inherit it).
if psql "${FACTORS_SYSTEM_DATABASE_URL%/*}/postgres" -tAc "select 1" >/dev/null 2>&1; then
  psql "${FACTORS_SYSTEM_DATABASE_URL%/*}/postgres" -tAc "create database lab_factors" >/dev/null 2>&1 || true
  say "database: $FACTORS_SYSTEM_DATABASE_URL (the machine's own); loading the dataset"
  DATABASE_URL="$FACTORS_SYSTEM_DATABASE_URL" loadtest/.venv/bin/python -m loadtest dataset >/dev/null
  data_directory="$(psql "$FACTORS_SYSTEM_DATABASE_URL" -tAc "show data_directory")"
  taskset -apc "$FACTORS_LOAD_CPU" "$(head -1 "$data_directory/postmaster.pid")" >/dev/null
else
  say "no PostgreSQL answers at ${FACTORS_SYSTEM_DATABASE_URL%/*}: database.toml's system-db arms will not start"
fi

# The local arms' environments, on each build (interpreter.toml needs both, the database files
# Debian's); a build this machine lacks is skipped, and the arms that need it will not start.
for build in pyenv debian; do
  interpreter="$FACTORS_PYENV/bin/python3.11"
  [ "$build" = debian ] && interpreter="$FACTORS_DEBIAN_PYTHON"
  if [ ! -x "$interpreter" ]; then
    say "no $interpreter here: no $build environments (FACTORS_PYENV / FACTORS_DEBIAN_PYTHON)"
    continue
  fi
  for project in app_v1 app_v2; do
    UV_PROJECT_ENVIRONMENT="$FACTORS_ENVS/$project-$build" \
      uv sync --quiet --locked --no-dev --compile-bytecode --python "$interpreter" --project "$project"
  done
done
say "local environments: $(ls "$FACTORS_ENVS" 2>/dev/null | tr '\n' ' ')"
say "ready: ./test.sh compare docker/factors/network.toml --allow-remote (and the other files)"
