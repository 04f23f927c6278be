"""Environments derived from another: an arm's code on other packages (a compare file's `from`
and `with`). The base environment's packages, as `uv pip freeze` lists them (editable installs
of the service's own code included), are installed into a new virtual environment with the pins
of `with` as uv overrides, so that a floor the code declares (app_v2's `pydantic>=2.12`) is no
conflict, on the base environment's own interpreter (never one uv downloads). Built by uv into
.tools/environments/<key>/, reused while the base's packages, the pins and the interpreter are
unchanged. Or, in place of the base's packages, a requirements file's."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
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
BUILD_RECIPE = "2: overrides, bytecode compiled"
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
        """`Python 3.11.2, pydantic 2.11.10, ...; built in 4.2 s`."""
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
) -> DerivedEnvironment:
    """The environment of `base_python` with `pins` over it, from the cache (CACHE_DIR unless
    given) or built now; a pin uv cannot satisfy is a LabError in one line, naming the
    conflict. Its packages are the base environment's as installed, or those a `requirements`
    file lists (read where it is: its relative paths are its own folder's; the cache key
    covers its own text, not that of files it includes)."""
    started = time.monotonic()
    cache_dir = cache_dir or CACHE_DIR
    uv = uv_program()
    if requirements is None:
        listed = run_uv(
            [uv, "pip", "freeze", "--python", str(base_python)], "read the base's packages"
        )
    else:
        try:
            listed = requirements.read_text()
        except (OSError, UnicodeDecodeError) as error:
            raise LabError(f"cannot read {requirements}: {error}") from None
    interpreter = run_checked(
        [str(base_python), "-c", "import sys; print(sys.version)"], "run the base's interpreter"
    )
    key = hashlib.sha256(
        "\n".join(
            [BUILD_RECIPE, interpreter, str(requirements), listed, "--with--", *sorted(pins)]
        ).encode()
    ).hexdigest()[:16]
    folder = cache_dir / key
    python = folder / "bin" / "python"
    built = not (folder / COMPLETE).is_file()
    if built:
        build(uv, base_python, (requirements, listed), pins, folder)
    versions = json.loads(run_checked([str(python), "-c", VERSIONS_SCRIPT], "read its versions"))
    return DerivedEnvironment(python, built, time.monotonic() - started, versions)


def build(
    uv: str,
    base_python: Path,
    packages: tuple[Path | None, str],
    pins: tuple[str, ...],
    folder: Path,
) -> None:
    """A fresh environment in `folder` (whatever an unfinished build left there is removed):
    the base's interpreter, the packages (a requirements file, or the base's as installed),
    the pins as overrides; then checked."""
    requirements, listed = packages
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        run_uv(
            [uv, "venv", "--quiet", "--python", str(base_python), str(folder)],
            "make the environment",
        )
        (folder / "requirements.txt").write_text(listed)  # what it was built from
        (folder / "overrides.txt").write_text("".join(f"{pin}\n" for pin in pins))
        run_uv(
            [
                uv,
                "pip",
                "install",
                "--quiet",
                # As the lab's environments: a start is measured from bytecode, as a deployed
                # service starts, not compiling every library first (scripts/bootstrap.sh).
                "--compile-bytecode",
                "--python",
                str(folder / "bin" / "python"),
                "--requirements",
                str(requirements or folder / "requirements.txt"),
                "--override",
                str(folder / "overrides.txt"),
            ],
            "install its packages (the base's packages are pinned as installed: a package "
            "named below that a pin needs moved goes in the pins too)",
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
    that a pin overrides is the point of the pin, and not reported.)"""
    result = subprocess.run(
        [uv, "pip", "check", "--python", str(folder / "bin" / "python")],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        env=uv_environment(),
    )
    pinned = {pin_name(pin) for pin in pins}
    for line in (result.stdout + result.stderr).splitlines():
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
    # The interpreter is the base's, never one uv downloads; no project is read from the
    # working directory.
    return {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_NO_CONFIG": "1"}


def run_uv(command: list[str], what: str) -> str:
    """uv's output; its failure as one line, uv's own reason in it."""
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            env=uv_environment(),
        )
    except subprocess.TimeoutExpired:
        raise LabError(f"uv did not {what} within {BUILD_TIMEOUT_S} s") from None
    if result.returncode != 0:
        raise LabError(f"uv could not {what}: {uv_reason(result.stderr)}")
    return result.stdout


def uv_reason(stderr: str) -> str:
    """uv's error in one line: its `cause:` (a resolution's chain of reasons) or its first
    line, the tree drawing and the hints left out."""
    lines = [line.strip(" ×╰─▶│") for line in stderr.splitlines()]
    lines = [line.strip() for line in lines if line.strip()]
    for index, line in enumerate(lines):
        if line.startswith("cause:") or line.startswith("Because"):
            reason = " ".join(
                item for item in lines[index:] if not item.startswith("hint:")
            ).removeprefix("cause:")
            return reason.strip()
    return lines[0].removeprefix("error:").strip() if lines else "(no message)"


def run_checked(command: list[str], what: str) -> str:
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise LabError(f"could not {what} ({command[0]}): {last}")
    return result.stdout.strip()
