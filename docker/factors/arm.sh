#!/usr/bin/env bash
# One arm of the factor experiment (docs/docker.md, "Why --docker found smaller ratios"): one of
# the lab's apps, in a container or not, varied one factor at a time. The compare files beside
# this script start it as an arm's command; it runs in the foreground until the harness stops it.
#
#   arm.sh APP PORT WHERE NETWORK CPU PYTHON [DATABASE]
#     APP      v1 | v2
#     PORT     the port it listens on (in the container too, so every network variant can share it)
#     WHERE    container | local
#     NETWORK  proxy   published on 127.0.0.1:PORT through docker-proxy (docker-compose.yml's way)
#              bridge  reached at its own address on the experiment's bridge, 172.30.0.<PORT-8000>
#                      (no userland proxy: the kernel routes it, as with userland-proxy: false)
#              host    the host's network namespace (--network host), on 127.0.0.1:PORT
#              -       local processes
#     CPU      quota   --cpus 1 (CFS quota: one CPU's worth of time, on any CPU; the compose file)
#              cpuset  --cpuset-cpus APP_CPU (the CPU the local run pins the apps to)
#              none    no limit
#              -       local processes (the harness pins them itself)
#     PYTHON   image   the image's interpreter (the stand-in's Debian 3.11.2, PGO+LTO)
#              pyenv   pyenv's 3.11.7 (no PGO/LTO), mounted read-only, on the image's packages
#              debian  local only: Debian's /usr/bin/python3.11 (PGO+LTO)
#     DATABASE container  the experiment's PostgreSQL container at 172.30.0.2 (the default)
#              host-db    the same image on the host's network, 127.0.0.1:55433 (no bridge)
#              weighted-db  host-db's image again, with --cpu-shares 10240
#              system-db  the machine's own PostgreSQL service (Debian's, no container)
#              lab        the lab's embedded PostgreSQL, which compare's [database] starts and
#                         hands over in DATABASE_URL (local arms only)
# setup.sh makes the network, the database (172.30.0.2, pinned beside the load generator), the
# images and the local environments these need.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/common.sh"
[ $# -eq 6 ] || [ $# -eq 7 ] || { echo "usage: arm.sh APP PORT WHERE NETWORK CPU PYTHON [DATABASE]" >&2; exit 2; }
app="$1" port="$2" where="$3" network="$4" cpu="$5" python="$6" database="${7:-container}"
case "$database" in
  container) database_url="$FACTORS_DATABASE_URL" ;;
  host-db) database_url="$FACTORS_HOST_DATABASE_URL"
       [ "$where" = local ] || { echo "arm.sh: DATABASE host-db is for local arms" >&2; exit 2; } ;;
  weighted-db) database_url="$FACTORS_WEIGHTED_DATABASE_URL"
       [ "$where" = local ] || { echo "arm.sh: DATABASE weighted-db is for local arms" >&2; exit 2; } ;;
  system-db) database_url="$FACTORS_SYSTEM_DATABASE_URL"
       [ "$where" = local ] || { echo "arm.sh: DATABASE system-db is for local arms" >&2; exit 2; } ;;
  lab) database_url="${DATABASE_URL:?no DATABASE_URL: give the compare file a [database] table}"
       [ "$where" = local ] || { echo "arm.sh: DATABASE lab is for local arms" >&2; exit 2; } ;;
  *) echo "arm.sh: DATABASE is container, host-db, weighted-db, system-db or lab, not $database" >&2; exit 2 ;;
esac
case "$app" in
  v1) project=app_v1 module=app_v1.main:app ;;
  v2) project=app_v2 module=app_v2.main:app ;;
  *) echo "arm.sh: APP is v1 or v2, not $app" >&2; exit 2 ;;
esac
uvicorn_arguments=(-m uvicorn "$module" --port "$port"
  --http commons.hardening.http_protocol:BoundedHttpToolsProtocol
  --workers 1 --no-access-log --log-level warning)

if [ "$where" = local ]; then
  environment="$FACTORS_ENVS/$project-$python"
  [ -x "$environment/bin/python" ] || { echo "arm.sh: no $environment (run setup.sh)" >&2; exit 1; }
  export DATABASE_URL="$database_url"
  exec "$environment/bin/python" "${uvicorn_arguments[@]}" --host 127.0.0.1
fi

name="pydantic-lab-factor-$app-$port"
docker rm --force "$name" >/dev/null 2>&1 || true
# No healthcheck: the harness asks /health itself, and the image's check (a new python every 2 s,
# run inside the container) would spend the CPUs this experiment measures.
options=(--rm --name "$name" --label pydantic-lab.factors=1 --memory 512m --no-healthcheck
  --env "DATABASE_URL=$database_url")
case "$network" in
  proxy) options+=(--network "$FACTORS_NETWORK" --publish "127.0.0.1:$port:$port") ;;
  bridge)
    # Its address from its port: 172.30.0.1 is the bridge's, .2 the database's.
    (( port >= 8003 && port <= 8254 )) || { echo "arm.sh: a bridge arm's PORT is 8003-8254" >&2; exit 2; }
    options+=(--network "$FACTORS_NETWORK" --ip "172.30.0.$((port - 8000))") ;;
  host) options+=(--network host) ;;
  *) echo "arm.sh: NETWORK is proxy, bridge or host, not $network" >&2; exit 2 ;;
esac
case "$cpu" in
  quota) options+=(--cpus 1) ;;
  cpuset) options+=(--cpuset-cpus "$FACTORS_APP_CPU") ;;
  none) ;;
  *) echo "arm.sh: CPU is quota, cpuset or none, not $cpu" >&2; exit 2 ;;
esac
bind=0.0.0.0  # inside its own network namespace; only the host's loopback publishes it
[ "$network" = host ] && bind=127.0.0.1  # the host's own namespace: loopback only
interpreter=python
case "$python" in
  image) ;;
  pyenv)
    # pyenv's build links its libpython by an absolute rpath under /root (closed to the image's
    # user): mounted elsewhere, the loader is told where; its own stdlib it finds from its path.
    options+=(--volume "$FACTORS_PYENV:/opt/pyenv-python:ro" --env LD_LIBRARY_PATH=/opt/pyenv-python/lib
      --env "PYTHONPATH=/lab/$project/.venv/lib/python3.11/site-packages")
    interpreter=/opt/pyenv-python/bin/python3.11 ;;
  *) echo "arm.sh: PYTHON in a container is image or pyenv, not $python" >&2; exit 2 ;;
esac
# Foreground, so the harness's stop (SIGTERM to this process group) reaches the container
# through docker run's signal proxy, and --rm removes it.
image="$(factor_image "$app")" || { echo "arm.sh: no image of app_$app (run setup.sh)" >&2; exit 1; }
exec docker run "${options[@]}" "$image" \
  "$interpreter" "${uvicorn_arguments[@]}" --host "$bind"
