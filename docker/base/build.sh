#!/usr/bin/env bash
# Stand-ins for the official base images, built from Debian's packages, for a machine that cannot
# pull from Docker Hub. They are tagged under the lab's own names, never the official ones:
#   pydantic-lab/python:3.11-debian12   in place of python:3.11.7-slim-bookworm (Debian's 3.11.2)
#   pydantic-lab/postgres:15-debian12   in place of postgres:18.1 (Debian's PostgreSQL 15), with the
#                                        official image's POSTGRES_USER/PASSWORD/DB, its
#                                        /docker-entrypoint-initdb.d and pg_isready
# Use them with PYTHON_IMAGE and POSTGRES_IMAGE (docker/smoke.sh does, when it cannot pull).
# Needs root, debootstrap and a Docker engine; DEBIAN_MIRROR picks the mirror. An image that
# exists is kept if this script and the entry point are as they were when it was built (its label
# pydantic-lab.standin holds their hash), else built again; --rebuild builds it again anyway.
# --print-stale prints the tags that a run would build (missing, or made by other versions).
set -euo pipefail
cd "$(dirname "$0")"

PYTHON_STANDIN=pydantic-lab/python:3.11-debian12
POSTGRES_STANDIN=pydantic-lab/postgres:15-debian12
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
# What made a stand-in: an image from an older entry point lacks what the lab now relies on.
INPUTS="$(cat build.sh postgres-entrypoint.sh | sha256sum | cut -c1-16)"
current() {  # current TAG: the image exists and these files made it
  [ "$(docker image inspect --format '{{index .Config.Labels "pydantic-lab.standin"}}' "$1" 2>/dev/null)" = "$INPUTS" ]
}
rebuild=0
for argument in "$@"; do
  case "$argument" in
    --rebuild) rebuild=1 ;;
    --print-tags) echo "$PYTHON_STANDIN $POSTGRES_STANDIN"; exit 0 ;;
    --print-stale)
      for tag in "$PYTHON_STANDIN" "$POSTGRES_STANDIN"; do current "$tag" || echo "$tag"; done
      exit 0 ;;
    *) echo "error: unknown option $argument (known: --rebuild, --print-tags, --print-stale)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "error: building the stand-in images needs root (debootstrap)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "error: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "error: no Docker engine answers (docker info failed)" >&2; exit 1; }

work="$(mktemp -d /var/tmp/pydantic-lab-base.XXXXXX)"
cleanup() {
  # An interrupted debootstrap can leave /proc or /sys mounted inside its target.
  awk -v work="$work" 'index($2, work) == 1 { print $2 }' /proc/mounts | sort -r \
    | while read -r mount; do umount -l "$mount"; done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$work/cache"

# debootstrap's output is shown only if it fails.
bootstrap() {  # bootstrap DIR PACKAGES
  local log="$work/debootstrap.log"
  if ! debootstrap --variant=minbase --cache-dir="$work/cache" --include="$2" \
      "$SUITE" "$1" "$MIRROR" >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "error: debootstrap $SUITE from $MIRROR failed (last lines above)" >&2
    exit 1
  fi
  rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/usr/share/doc/* "$1"/usr/share/man/*
}

image() {  # image DIR TAG < Dockerfile lines: the folder as one layer, then the image's settings
  # The layer gets a name of its own for the build: BuildKit reads `FROM <image id>` as an
  # image to pull; the legacy builder takes either.
  local dir="$1" tag="$2" rootfs="${2%%:*}-rootfs:build"
  tar --numeric-owner -C "$dir" -c . | docker import - "$rootfs" >/dev/null
  # Docker's notice that its legacy builder is deprecated is shown only if the build fails.
  if ! { echo "FROM $rootfs"; echo "LABEL pydantic-lab.standin=$INPUTS"; cat; } \
       | docker build --quiet --tag "$tag" - >/dev/null 2>"$work/build.log"; then
    cat "$work/build.log" >&2
    docker rmi "$rootfs" >/dev/null 2>&1
    echo "error: docker build of $tag failed" >&2
    exit 1
  fi
  docker rmi "$rootfs" >/dev/null  # the name only: the layer stays, under the image
  echo "built $tag"
}

if [ "$rebuild" = 1 ] || ! current "$PYTHON_STANDIN"; then
  root="$work/python"
  bootstrap "$root" python3.11,python3-pip,python-is-python3,ca-certificates
  # The official image lets pip install into the system Python; Debian marks it as managed.
  rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
  image "$root" "$PYTHON_STANDIN" <<'DOCKERFILE'
ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["python3"]
DOCKERFILE
  rm -rf "$root"
else
  echo "$PYTHON_STANDIN is current (--rebuild builds it again)"
fi

if [ "$rebuild" = 1 ] || ! current "$POSTGRES_STANDIN"; then
  root="$work/postgres"
  bootstrap "$root" postgresql-15
  # Debian's package made a cluster of its own; the entry point makes the official image's one.
  rm -rf "$root"/var/lib/postgresql/15 "$root"/etc/postgresql/15
  install -m 0755 postgres-entrypoint.sh "$root/usr/local/bin/docker-entrypoint.sh"
  chroot "$root" sh -c 'mkdir -p /var/lib/postgresql/data /run/postgresql /docker-entrypoint-initdb.d &&
    chown -R postgres:postgres /var/lib/postgresql /run/postgresql &&
    chmod 0700 /var/lib/postgresql/data'
  image "$root" "$POSTGRES_STANDIN" <<'DOCKERFILE'
ENV LANG=C.UTF-8 PGDATA=/var/lib/postgresql/data \
    PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
USER postgres
EXPOSE 5432
# As the official image: SIGINT is PostgreSQL's fast shutdown (SIGTERM waits for every client).
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
DOCKERFILE
  rm -rf "$root"
else
  echo "$POSTGRES_STANDIN is current (--rebuild builds it again)"
fi
