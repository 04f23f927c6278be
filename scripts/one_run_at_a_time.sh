#!/usr/bin/env bash
# Sourced by test.sh: one measuring run at a time on this machine. Two runs on the same CPUs
# corrupt each other's figures whatever their ports or folders, so every clone of the lab takes
# the same lock, a kernel flock held by the runner itself: it ends with that process, however
# it ends (kill -9 included), and never outlives it in an app or a sync it started.
# LAB_RUN_LOCK_FILE moves it (the harness's tests give each test a lock of its own).

RUN_LOCK_FILE="${LAB_RUN_LOCK_FILE:-/tmp/pydantic-v1-v2-lab.lock}"
# The runner marks what it starts with the lock it held (loadtest/lab/leftovers.py): what a run
# killed outright leaves is found, and `./test.sh clean` stops it, per lock.
export LAB_RUN_LOCK_FILE="$RUN_LOCK_FILE"
# The modes that start nothing and measure nothing: they never need the machine to themselves
# (modes/registry.py says the same of each mode, and a test holds the two together).
LOCK_FREE_MODES="report losses"

# The mode a command line runs, as cli.py reads it: its first word, unless that is an option.
mode_of() {
  case "${1:-}" in
    "" | -*) echo benchmark ;;
    *) echo "$1" ;;
  esac
}

# Every mode but the lock-free ones needs the machine, unless it is only asked for its help.
needs_the_machine() {
  local argument
  for argument in "$@"; do
    case "$argument" in -h | --help) return 1 ;; esac
  done
  case " $LOCK_FREE_MODES " in *" $(mode_of "$@") "*) return 1 ;; esac
}

# The run that holds the lock, as it wrote itself into the lock file: "pid<TAB>mode<TAB>checkout
# <TAB>since". The holder writes it just after it takes the lock, so give it a moment.
describe_holder() {
  local pid="" mode="" checkout="" since="" attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    IFS=$'\t' read -r pid mode checkout since <"$RUN_LOCK_FILE" || true
    if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then
      echo "./test.sh $mode, pid $pid, in $checkout, since $since UTC"
      return
    fi
    sleep 0.1
  done
  echo "a process that did not say which ($RUN_LOCK_FILE names no live run)"
}

# Whether a run that holds the machine works in this checkout (with its environments).
run_in_this_checkout() {
  local pid="" mode="" checkout="" since=""
  IFS=$'\t' read -r pid mode checkout since 2>/dev/null <"$RUN_LOCK_FILE" || true
  [ -n "$pid" ] && [ -d "/proc/$pid" ] && [ "$checkout" = "$(pwd -P)" ]
}

# Take the lock on file descriptor 9 of this shell, which the runner inherits through `exec`;
# or refuse in one line, before anything is started or synced.
hold_the_machine() {
  local mode="$1"
  if ! command -v flock >/dev/null 2>&1; then
    echo "./test.sh: error: flock (util-linux) is missing; install it: it keeps a second run" \
      "off this machine (see ./test.sh --help)" >&2
    exit 1
  fi
  # A symlink at the lock's name is refused, never followed: in a world-writable folder such as
  # /tmp another local user could plant one, and the holder's line below would be written
  # through it into whatever file it names (issue 53).
  if [ -L "$RUN_LOCK_FILE" ]; then
    echo "./test.sh: error: the run lock $RUN_LOCK_FILE is a symlink (to" \
      "$(readlink "$RUN_LOCK_FILE")), which the lab never follows; remove it, or set" \
      "LAB_RUN_LOCK_FILE to another path for every run (see ./test.sh --help)" >&2
    exit 1
  fi
  # Created world-writable and opened read-only (flock needs no more): another user's runs lock
  # and name themselves in the same file.
  [ -e "$RUN_LOCK_FILE" ] || (umask 000 && set -o noclobber && : >"$RUN_LOCK_FILE") 2>/dev/null || true
  if ! { exec 9<"$RUN_LOCK_FILE"; } 2>/dev/null; then
    echo "./test.sh: error: cannot open the run lock $RUN_LOCK_FILE; make it readable, or" \
      "set LAB_RUN_LOCK_FILE to another path for every run (see ./test.sh --help)" >&2
    exit 1
  fi
  if ! flock --nonblock 9; then
    echo "./test.sh: error: another run has this machine: $(describe_holder); two runs at" \
      "once measure each other, so wait for it to end or stop it (see ./test.sh --help)" >&2
    exit 1
  fi
  # dd's nocreat: a file another user created in /tmp cannot be opened for creation
  # (fs.protected_regular), only for writing. Its nofollow (O_NOFOLLOW): a symlink planted after
  # the check above is not written through either. Without the line the refusal says less,
  # nothing worse.
  printf '%s\t%s\t%s\t%s\n' "$$" "$mode" "$(pwd -P)" "$(date -u +%H:%M:%S)" \
    | dd of="$RUN_LOCK_FILE" conv=nocreat oflag=nofollow status=none 2>/dev/null || true
}
