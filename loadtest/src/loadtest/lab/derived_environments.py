"""Environments derived from another: an arm's code on other packages (a compare file's `from`
and `with`). The base environment's packages, as `uv pip freeze` lists them (editable installs
of the service's own code included), are installed into a new virtual environment with the pins
of `with` as uv overrides, so that a floor the code declares (app_v2's `pydantic>=2.12`) is no
conflict, on the base environment's own interpreter or on another the caller names (the
versions mode's --python: pyenv's builds), never one uv downloads. Built by uv into
.tools/environments/<key>/, reused while the base's packages, the pins and the interpreter are
unchanged. Or, in place of the base's packages, a requirements file's."""

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadtest.lab.errors import LabError
from loadtest.lab.paths import REPOSITORY_ROOT

CACHE_DIR = REPOSITORY_ROOT / ".tools" / "environments"
COMPLETE = ".complete"  # written last: a folder without it is a build that did not finish
BUILD_TIMEOUT_S = 900
# Part of every cache key: changed whenever the way an environment is built changes, so that
# none built the old way is reused.
BUILD_RECIPE = "3: overrides, bytecode compiled, uv and its environment in the key"
# The packages whose versions a derived environment reports (results.json, the run's output).
REPORTED = ("pydantic", "pydantic-core", "fastapi", "starlette")
VERSIONS_SCRIPT = f"""
import json, platform
from importlib import metadata

def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None

print(json.dumps({{"python": platform.python_version(),
                  **{{name: version(name) for name in {REPORTED!r}}}}}))
"""


@dataclass(frozen=True)
class DerivedEnvironment:
    """A derived environment, ready: its interpreter, whether this run built it (or found it
    in the cache), how long that took, and the versions it resolved to."""

    python: Path
    built: bool
    seconds: float
    versions: dict[str, str | None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "python": str(self.python),
            "built": self.built,
            "seconds": round(self.seconds, 1),
            "versions": self.versions,
        }

    def sentence(self) -> str:
        """`python 3.11.2, pydantic 2.11.10, ...; built in 4.2 s (its folder)`."""
        found = ", ".join(
            f"{name} {version}" for name, version in self.versions.items() if version is not None
        )
        how = f"built in {self.seconds:.1f} s" if self.built else "reused from the cache"
        return f"{found}; {how} ({self.python.parent.parent})"


def uv_program() -> str:
    """uv: the one ./test.sh installed into .tools/uv, or one on PATH."""
    found = shutil.which("uv") or shutil.which("uv", path=str(REPOSITORY_ROOT / ".tools/uv/bin"))
    if found is None:
        raise LabError("uv is not on PATH: run ./test.sh once, which installs it into .tools/uv")
    return found


def is_environment_python(program: Path) -> bool:
    """Whether `program` is a virtual environment's interpreter (its folder's parent holds a
    pyvenv.cfg): the environment an arm can be derived from."""
    return program.name.startswith("python") and (program.parent.parent / "pyvenv.cfg").is_file()


def derive_environment(
    base_python: Path,
    pins: tuple[str, ...],
    cache_dir: Path | None = None,
    requirements: Path | None = None,
    interpreter: Path | None = None,
) -> DerivedEnvironment:
    """The environment of `base_python` with `pins` over it, from the cache (CACHE_DIR unless
    given) or built now; a pin uv cannot satisfy is a LabError in one line, naming the
    conflict. Its packages are the base environment's as installed, or those a `requirements`
    file lists (installed from its folder, so its relative paths are its own; the key covers
    its own text, not that of files it includes). On `interpreter` when given (another Python
    than the base's), else on the base's own."""
    started = time.monotonic()
    cache_dir = cache_dir or CACHE_DIR
    uv = uv_program()
    listed = packages_of(uv, base_python, requirements)
    folder = environment_folder(uv, base_python, pins, cache_dir, requirements, listed, interpreter)
    python = folder / "bin" / "python"
    cache_dir.mkdir(parents=True, exist_ok=True)
    with locked(folder.with_suffix(".lock")):  # two runs never build one folder at once
        built = not (folder / COMPLETE).is_file()
        if built:
            build(uv, interpreter or base_python, requirements, listed, pins, folder)
    versions = json.loads(run_checked([str(python), "-c", VERSIONS_SCRIPT], "read its versions"))
    return DerivedEnvironment(python, built, time.monotonic() - started, versions)


def environment_folder(
    uv: str,
    base_python: Path,
    pins: tuple[str, ...],
    cache_dir: Path | None = None,
    requirements: Path | None = None,
    listed: str | None = None,
    interpreter: Path | None = None,
) -> Path:
    """Where the environment of `base_python` with `pins` (on `interpreter`, when given) is
    (or will be) kept: nothing built."""
    if listed is None:
        listed = packages_of(uv, base_python, requirements)
    key = environment_key(uv, interpreter or base_python, pins, requirements, listed)
    return (cache_dir or CACHE_DIR) / key


def packages_of(uv: str, base_python: Path, requirements: Path | None) -> str:
    """What is installed: the requirements file's text, or the base's packages as installed."""
    if requirements is None:
        return run_uv(
            [uv, "pip", "freeze", "--python", str(base_python)], "read the base's packages"
        )
    try:
        return requirements.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise LabError(f"cannot read {requirements}: {error}") from None


def environment_key(
    uv: str, python: Path, pins: tuple[str, ...], requirements: Path | None, listed: str
) -> str:
    """The cache folder's name: whatever decides what gets installed. The recipe, uv's version
    and the UV_ variables it reads (an index, a cut-off date), the interpreter it is built on
    (its version and build), where a requirements file is (its relative paths are read from
    there), the packages, the pins."""
    interpreter = run_checked(
        [str(python), "-c", "import sys; print(sys.version)"], "run the interpreter"
    )
    settings = sorted(
        f"{name}={value}"
        for name, value in os.environ.items()
        if name.startswith("UV_") and name != "UV_CACHE_DIR"
    )
    parts = [
        BUILD_RECIPE,
        run_uv([uv, "--version"], "tell its version"),
        *settings,
        interpreter,
        str(requirements),
        listed,
        "--with--",
        *sorted(pins),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@contextmanager
def locked(path: Path) -> Iterator[None]:
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(
    uv: str,
    python: Path,
    requirements: Path | None,
    listed: str,
    pins: tuple[str, ...],
    folder: Path,
) -> None:
    """A fresh environment in `folder` (whatever an unfinished build left there is removed):
    on `python` (the base's interpreter, or the one asked for), the packages, the pins as
    overrides; then checked. Interrupted or
    refused, nothing of it is left."""
    shutil.rmtree(folder, ignore_errors=True)
    try:
        run_uv(
            [uv, "venv", "--quiet", "--python", str(python), str(folder)],
            "make the environment",
        )
        (folder / "requirements.txt").write_text(listed)  # what it was built from
        (folder / "overrides.txt").write_text("".join(f"{pin}\n" for pin in pins))
        hint = (
            "the file's packages, with the pins over them"
            if requirements
            else "the base's packages are pinned as installed: a package named below that a pin "
            "needs moved goes in the pins too"
        )
        run_uv(
            [
                uv,
                "pip",
                "install",
                "--quiet",
                "--python",
                str(folder / "bin" / "python"),
                # As the lab's environments: a start is measured from bytecode, as a deployed
                # service starts, not compiling every library first (scripts/bootstrap.sh).
                "--compile-bytecode",
                "--requirements",
                str(requirements or folder / "requirements.txt"),
                "--override",
                str(folder / "overrides.txt"),
            ],
            f"install its packages ({hint})",
            cwd=requirements.parent if requirements else None,
        )
        contradiction = contradicting_pins(uv, folder, pins)
        if contradiction is not None:
            raise LabError(f"the pins contradict each other: {contradiction}")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    (folder / COMPLETE).write_text(" ".join(pins) + "\n")


def contradicting_pins(uv: str, folder: Path, pins: tuple[str, ...]) -> str | None:
    """An override replaces every requirement on its package, those of the other pins too: a
    pinned package that requires another pinned package at another version is installed
    broken. `uv pip check`'s line for it, or None. (A requirement of the base's own packages
    that a pin overrides is the point of the pin, and is not reported.)"""
    python = str(folder / "bin" / "python")
    lines = run_uv(
        [uv, "pip", "check", "--python", python], "check it", allowed=(0, 1), messages=True
    )
    pinned = {pin_name(pin) for pin in pins}
    for line in lines.splitlines():
        found = re.search(r"The package `([^`]+)` requires `([^`<>=!~ ;\[]+)", line)
        if found and {normalised(found.group(1)), normalised(found.group(2))} <= pinned:
            return line.strip()
    return None


def pin_name(pin: str) -> str:
    """`pydantic-core` of `pydantic_core==2.33.2`."""
    return normalised(re.split(r"[<>=!~ ;\[@]", pin, maxsplit=1)[0])


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def uv_environment() -> dict[str, str]:
    # The interpreter is the base's, never one uv downloads; no project or uv.toml is read
    # from the working directory; no colours in the messages that are parsed.
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("FORCE_COLOR", "CLICOLOR_FORCE")
    }
    return environment | {"UV_PYTHON_DOWNLOADS": "never", "UV_NO_CONFIG": "1", "NO_COLOR": "1"}


def run_uv(
    command: list[str],
    what: str,
    allowed: tuple[int, ...] = (0,),
    cwd: Path | None = None,
    messages: bool = False,
) -> str:
    """uv's output, and with `messages` what it wrote to stderr too (`uv pip check` writes its
    findings there); a failure, or a wait past BUILD_TIMEOUT_S, as one line with uv's own
    reason in it."""
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            env=uv_environment(),
            cwd=cwd,
        )
    except subprocess.TimeoutExpired:
        raise LabError(f"uv did not {what} within {BUILD_TIMEOUT_S} s") from None
    if result.returncode not in allowed:
        raise LabError(f"uv could not {what}: {uv_reason(result.stderr)}")
    return result.stdout + result.stderr if messages else result.stdout


def uv_reason(stderr: str) -> str:
    """uv's error in one line: its `cause:` (a resolution's chain of reasons) or its `error:`
    line, the tree drawing and the hints left out."""
    lines = [line.strip(" ×╰─▶│") for line in stderr.splitlines()]
    lines = [line.strip() for line in lines if line.strip()]
    for index, line in enumerate(lines):
        if line.startswith("cause:") or line.startswith("Because"):
            reason = " ".join(
                item for item in lines[index:] if not item.startswith(("hint:", "warning:"))
            ).removeprefix("cause:")
            return reason.strip()
    errors = [line for line in lines if line.startswith("error:")]
    found = errors[0] if errors else (lines[0] if lines else "(no message)")
    return found.removeprefix("error:").strip()


def run_checked(command: list[str], what: str) -> str:
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise LabError(f"could not {what} ({command[0]}): {last}")
    return result.stdout.strip()
