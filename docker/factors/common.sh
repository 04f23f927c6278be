# Sourced by the factor experiment's scripts: where its pieces are.
FACTORS_NETWORK=pydantic-lab-factors          # a bridge of its own, 172.30.0.0/24
FACTORS_DATABASE=pydantic-lab-factors-db      # PostgreSQL at 172.30.0.2, every arm reaches it the same way
FACTORS_DATABASE_URL=postgresql://lab:lab@172.30.0.2:5432/lab
# The same PostgreSQL image on the host's network (loopback only), the database path without
# the bridge.
FACTORS_HOST_DATABASE=pydantic-lab-factors-db-host
FACTORS_HOST_DATABASE_URL=postgresql://lab:lab@127.0.0.1:55433/lab
# ... and once more with ten times the default CPU weight (--cpu-shares 10240): the scheduler
# then gives its group what its processes would get on their own.
FACTORS_WEIGHTED_DATABASE=pydantic-lab-factors-db-weighted
FACTORS_WEIGHTED_DATABASE_URL=postgresql://lab:lab@127.0.0.1:55434/lab
# Debian's own PostgreSQL service, where the machine runs one on 127.0.0.1:5432 (this project's
# machines do: PostgreSQL 15, trust auth): the stand-in's version without any container.
FACTORS_SYSTEM_DATABASE_URL="${FACTORS_SYSTEM_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/lab_factors}"
FACTORS_POSTGRES_IMAGE="${POSTGRES_IMAGE:-pydantic-lab/postgres:15-debian12}"
FACTORS_PYENV="${FACTORS_PYENV:-$HOME/.pyenv/versions/3.11.7}"   # the unoptimised build
FACTORS_DEBIAN_PYTHON="${FACTORS_DEBIAN_PYTHON:-/usr/bin/python3.11}"  # the optimised one
FACTORS_REPOSITORY="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
FACTORS_ENVS="$FACTORS_REPOSITORY/.tools/factors"    # the local arms' environments (git-ignored)
# The lab's pinning (loadtest/lab/pinning.py): the load side on the first half of the CPUs, the
# apps on the second; on a 2-CPU machine, CPU 0 and CPU 1. `nproc --all`: the harness starts
# arm.sh already pinned to the app CPUs, where plain nproc would count those alone.
factors_cpus="$(nproc --all)"
FACTORS_LOAD_CPU="0-$(( factors_cpus / 2 - 1 ))"
FACTORS_APP_CPU="$(( factors_cpus / 2 ))-$(( factors_cpus - 1 ))"
FACTORS_ALL_CPUS="0-$(( factors_cpus - 1 ))"
# The app's image as Compose named it: project_service (1.29) or project-service (v2).
factor_image() {
  local name
  for name in "pydantic-lab_app_$1" "pydantic-lab-app_$1"; do
    docker image inspect "$name" >/dev/null 2>&1 && { echo "$name"; return 0; }
  done
  return 1
}
