"""Which Python build the lab measures on: an interpreter's build facts (version, PGO, LTO,
shared library, and how that is known), and the choice of interpreter for the lab's locked
environments (scripts/bootstrap.sh runs this file by path, before any environment exists, so it
uses the standard library only).

The build matters more than the patch version: a build with profile-guided optimisation and
link-time optimisation runs pure Python about 1.3x faster than one configured with
`--enable-shared` alone (pyenv's default). `sysconfig`'s CONFIG_ARGS shows
`--enable-optimizations` and `--with-lto` where configure was given them (python.org's builds,
the official Docker images, uv's managed interpreters). Debian builds CPython with PGO and LTO
on amd64 and arm64 through its own rules and keeps those flags out of sysconfig (its changelog:
"Don't propagate lto flags to the _sysconfigdata module", #934771), so for an interpreter
Debian's package owns, the package is how it is known.

    python3 loadtest/src/loadtest/lab/interpreter.py --pick   # the path the lab uses, stdout
    python3 loadtest/src/loadtest/lab/interpreter.py PYTHON   # PYTHON's build facts, JSON
"""

from __future__ import annotations  # the bootstrap may run it on an older python3

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Run inside the interpreter being described (`python -c`), so it may use its stdlib only.
# It asks Debian's package manager itself, where there is one, so the answer is the same here
# and inside a container (`docker exec`, `compose run`).
FACTS_SOURCE = r"""
import json, os, platform, subprocess, sys, sysconfig
args = sysconfig.get_config_var("CONFIG_ARGS") or ""
real = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
package = None
try:
    owner = subprocess.run(["dpkg", "-S", real], capture_output=True, text=True)
    name = owner.stdout.split(":", 1)[0].strip() if owner.returncode == 0 else ""
    if name:
        version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", name],
                                 capture_output=True, text=True).stdout.strip()
        package = (name + " " + version).strip()
except OSError:
    pass
print(json.dumps({
    "implementation": platform.python_implementation(),
    "version": platform.python_version(),
    "real_executable": real,
    "configure_pgo": "--enable-optimizations" in args,
    "configure_lto": "--with-lto" in args,
    "shared": bool(sysconfig.get_config_var("Py_ENABLE_SHARED")),
    "machine": platform.machine(),
    "debian_package": package,
}))
"""
DEBIAN_PGO_LTO_MACHINES = ("x86_64", "aarch64")  # Debian's amd64 and arm64
LAB_SERIES = (3, 11)  # the Python the lab's environments are locked and measured on


def build_facts(python: str | os.PathLike[str], run: list[str] | None = None) -> dict[str, object]:
    """What a reader needs to know about an interpreter's build. `run` is the command prefix
    that runs it elsewhere (`docker exec ID`); None runs it here."""
    command = [*(run or []), str(python), "-c", FACTS_SOURCE]
    answer = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    if answer.returncode != 0:
        last = (answer.stderr.strip().splitlines() or ["it printed nothing"])[-1]
        raise RuntimeError(f"cannot ask {python} about its build: {last}")
    raw = json.loads(answer.stdout.strip().splitlines()[-1])
    package = raw.get("debian_package")
    if raw["configure_pgo"] or raw["configure_lto"]:
        pgo, lto = raw["configure_pgo"], raw["configure_lto"]
        known_from = "configure flags (sysconfig CONFIG_ARGS)"
    elif package and package.startswith("python3") and raw["machine"] in DEBIAN_PGO_LTO_MACHINES:
        pgo = lto = True
        known_from = f"Debian's package {package} (built with PGO and LTO; sysconfig omits it)"
    else:
        pgo = lto = False
        known_from = "configure flags (sysconfig CONFIG_ARGS): neither PGO nor LTO asked for"
    return {
        "implementation": raw["implementation"],
        "version": raw["version"],
        "executable": raw["real_executable"],
        "pgo": pgo,
        "lto": lto,
        "shared": raw["shared"],
        "known_from": known_from,
    }


def describe(facts: dict[str, object]) -> str:
    """`CPython 3.11.2, PGO+LTO` / `CPython 3.11.7, no PGO/LTO` (reports and the terminal)."""
    optimised = [name for name in ("pgo", "lto") if facts.get(name)]
    build = "+".join(name.upper() for name in optimised) if optimised else "no PGO/LTO"
    return f"{facts['implementation']} {facts['version']}, {build}"


def is_optimised(facts: dict[str, object]) -> bool:
    return bool(facts.get("pgo")) and bool(facts.get("lto"))


def candidates() -> list[str]:
    """Every Python 3.11 here, in the order the lab prefers among equals: PATH's first."""
    series = f"python{LAB_SERIES[0]}.{LAB_SERIES[1]}"
    found = [shutil.which(series), shutil.which("python3")]
    found += [f"/usr/bin/{series}", f"/usr/local/bin/{series}"]
    seen: dict[str, str] = {}
    for path in found:
        if path and os.access(path, os.X_OK):
            seen.setdefault(os.path.realpath(path), path)
    return list(seen.values())


def pick() -> tuple[str | None, str]:
    """(interpreter, why): LAB_PYTHON where set; else the first optimised Python 3.11 here;
    else the first Python 3.11, saying that no optimised build was found; else None (uv then
    picks one as it always did, by the projects' requires-python)."""
    chosen = os.environ.get("LAB_PYTHON")
    if chosen:
        return chosen, "LAB_PYTHON"
    described = []
    for path in candidates():
        try:
            facts = build_facts(path)
        except (RuntimeError, OSError, subprocess.TimeoutExpired, ValueError):
            continue
        if tuple(int(part) for part in str(facts["version"]).split(".")[:2]) != LAB_SERIES:
            continue
        if is_optimised(facts):
            return path, f"optimised build ({describe(facts)})"
        described.append((path, facts))
    if described:
        path, facts = described[0]
        return path, f"no optimised Python 3.11 here; {describe(facts)}"
    return None, "no Python 3.11 here; uv picks one by the projects' requires-python"


def main(arguments: list[str]) -> int:
    if arguments == ["--pick"]:
        path, why = pick()
        print(path or "")
        # Said where it is not the stated default: an optimised build, or LAB_PYTHON.
        if path is None or why.startswith("no optimised"):
            print(f"note: the lab's environments: {path or 'uv decides'} ({why})", file=sys.stderr)
        return 0
    if len(arguments) == 1 and not arguments[0].startswith("-"):
        print(json.dumps(build_facts(Path(arguments[0])), indent=2))
        return 0
    print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
