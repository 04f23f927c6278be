"""A compare file (TOML, docs/compare.md): the arms (a command to start, or a URL already
running), the scenarios they are loaded with, and the benchmark's options, read into the
PairedPlan every paired mode runs (load/plan.py). A bad file is one line naming the file, the
line and the field."""

import json
import os
import re
import shlex
import shutil
import tomllib
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.lab.derived_environments import is_environment_python
from loadtest.lab.errors import LabError
from loadtest.lab.services import Service, is_loopback, local_url
from loadtest.load.plan import (
    ARM_PLACEHOLDER,
    COUNTER_PLACEHOLDER,
    PairedPlan,
    Request,
    Scenario,
)
from loadtest.modes.compare.normalise import NORMALISATIONS

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
TABLE_HEADER = re.compile(r"^\[\[?(.*?)\]\]?\s*(#.*)?$")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
PORT_PLACEHOLDER = "{port}"  # in an arm's command and environment: its port
MIN_POSTS = 100  # the lab's READ page
# The options a file may set, and the benchmark setting each one sets.
OPTIONS = {
    "pairs": "pairs",
    "repeats": "repeats",
    "window_s": "window_s",
    "settle_s": "settle_s",
    "warmup_s": "warmup_s",
    "users": "users",
    "pin": "pin",
    "startup_samples": "startup_samples",
    "load_processes": "load_processes",
    "calibrate": "calibrate",
}
TOP_KEYS = ("baseline", "allow_remote", "options", "database", "verify", "arms", "scenarios")
ARM_KEYS = (
    "label",
    "command",
    "cwd",
    "env",
    "port",
    "url",
    "health",
    "compare_with",
    "start_timeout_s",
    "own_process",
    "container",
    "from",
    "with",
    "requirements",
)
# What an arm derived from another (`from`) takes from it, unless it says otherwise: it runs the
# same command in an environment of its own. Its port, label, url and the rest are its own.
INHERITED_KEYS = ("command", "cwd", "env", "health", "start_timeout_s")
# A pin of `with`: a package, its extras, and one or more version clauses; nothing else (each
# becomes a line of uv's overrides file).
VERSION_CLAUSE = r"(===|==|!=|~=|>=|<=|<|>)[A-Za-z0-9.*+!_-]+"
PIN = re.compile(
    rf"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*\])?"
    rf"{VERSION_CLAUSE}(,{VERSION_CLAUSE})*"
)
SCENARIO_KEYS = (
    "label",
    "method",
    "path",
    "headers",
    "body",
    "status",
    "fields",
    "vary",
    "read_back",
    "check",
)
CHECK_KEYS = ("prefix", "marker", "count", "item", "exact")


CALLER_PATH = "LAB_CALLER_PATH"  # test.sh: the PATH it was called with


def caller_path() -> str | None:
    """The PATH ./test.sh was called with (before its bootstrap put uv's python first): where
    an arm's program is looked for, and the PATH it runs with."""
    return os.environ.get(CALLER_PATH) or os.environ.get("PATH")


RUNNING_ARM_TIMEOUT_S = 5


@dataclass(frozen=True)
class ArmOptions:
    """What a file says of an arm besides its Service."""

    start_timeout_s: float = 60.0
    own_process: bool = True  # false: the command only launches it (docker run): no CPU/memory
    # ... unless it names the container it starts, whose processes are read instead (root)
    container: str | None = None
    # `from` and `with`: the arm whose command runs, in its environment with these pins over
    # it (lab/derived_environments.py, built when the run starts).
    derive_from: str | None = None
    pins: tuple[str, ...] = ()
    requirements: Path | None = None  # in place of the base's packages as installed


@dataclass(frozen=True)
class CompareFile:
    """A compare file, read and checked."""

    path: Path
    plan: PairedPlan
    options: dict[str, Any]  # benchmark settings the file sets
    dataset_size: int | None  # [database] posts: the lab's PostgreSQL and dataset, or none
    normalisations: tuple[str, ...]
    allow_remote: bool
    arm_options: dict[str, ArmOptions]
    # Per derived arm, its environment as the run built or found it (set when the run starts).
    environments: dict[str, dict[str, Any]] = dataclass_field(default_factory=dict)


class FileError(LabError):
    """A problem with a compare file, in one line: the file, the line, the field."""


class Reader:
    """Reads one file's values, and says where a bad one is."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def fail(self, field: str, problem: str) -> FileError:
        line = self.line_of(field)
        where = f"{self.path}:{line}" if line else str(self.path)
        return FileError(f"{where}: {field}: {problem}")

    def line_of(self, field: str) -> int | None:
        """The line of `field` (dotted): its `key =` line inside its table, or the table's own
        header, or its parent's."""
        parts = field.split(".")
        for depth in range(len(parts), 0, -1):
            table, key = parts[: depth - 1], parts[depth - 1]
            found = self.key_line(table, key)
            if found:
                return found
        return None

    def key_line(self, table: list[str], key: str) -> int | None:
        current: list[str] = []
        for number, raw in enumerate(self.lines, 1):
            line = raw.strip()
            if line.startswith("["):
                # the header's name, without a comment after it (`[arms.v1]  # the old one`)
                header = TABLE_HEADER.match(line)
                inside = header.group(1) if header else line.strip("[]")
                current = [part.strip().strip("\"'") for part in inside.split(".")]
                if current == [*table, key]:
                    return number
                continue
            name = line.split("=", 1)[0].strip().strip("\"'") if "=" in line else None
            if current == table and name == key:
                return number
            # a dotted key (`arms.v1.port = ...`) or a key of an inline table's parent
            if name is not None and [*current, *name.split(".")] == [*table, key]:
                return number
        return None

    def name(self, name: str, table: str, what: str) -> str:
        """An arm's or a scenario's name, checked; returns its field (`table.name`)."""
        field = f"{table}.{name}"
        if not NAME.match(name):
            raise self.fail(field, f"{what}'s name is 1-40 letters, digits, '.', '_' or '-'")
        return field

    def table(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, f"expected a table, got {describe(value)}")
        return value

    def known_keys(self, table: dict[str, Any], allowed: tuple[str, ...], field: str) -> None:
        for key in table:
            if key not in allowed:
                where = f"{field}.{key}" if field else key
                raise self.fail(where, f"unknown field; expected one of {', '.join(allowed)}")

    def string(self, value: Any, field: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(field, f"expected a non-empty string, got {describe(value)}")
        return value

    def strings(self, value: Any, field: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(field, f"expected a list of strings, got {describe(value)}")
        return tuple(value)

    def string_table(self, value: Any, field: str) -> tuple[tuple[str, str], ...]:
        table = self.table(value, field)
        for key, item in table.items():
            if not isinstance(item, str):
                raise self.fail(f"{field}.{key}", f"expected a string, got {describe(item)}")
        return tuple(table.items())

    def integer(self, value: Any, field: str, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(field, f"expected a whole number {low}-{high}, got {describe(value)}")
        return value

    def number(self, value: Any, field: str, low: float, high: float) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not (low <= value <= high)
        ):
            raise self.fail(field, f"expected a number {low:g}-{high:g}, got {describe(value)}")
        return float(value)

    def boolean(self, value: Any, field: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(field, f"expected true or false, got {describe(value)}")
        return value


def describe(value: Any) -> str:
    shown = json.dumps(value) if isinstance(value, str | int | float | bool) else None
    kind = (
        "a table"
        if isinstance(value, dict)
        else "a list"
        if isinstance(value, list)
        else (type(value).__name__)
    )
    return shown if shown is not None and len(shown) <= 40 else kind


def read_compare_file(path: Path, *, allow_remote: bool = False) -> CompareFile:
    """The file, read and checked; FileError (one line) at the first problem."""
    text, document = read_toml(path)
    reader = Reader(path, text)
    reader.known_keys(document, TOP_KEYS, "")
    options = read_options(reader, document.get("options", {}))
    dataset_size = read_database(reader, document.get("database"))
    normalisations = read_verify(reader, document.get("verify", {}))
    file_allows_remote = reader.boolean(document.get("allow_remote", False), "allow_remote")
    arms_table = reader.table(document.get("arms"), "arms") if "arms" in document else {}
    if len(arms_table) < 2:
        raise reader.fail("arms", "declare at least two arms ([arms.NAME] tables) to compare")
    services, arm_options, compare_with = read_arms(reader, arms_table, path.absolute().parent)
    names = tuple(service.name for service in services)
    check_arms(reader, services, file_allows_remote, allow_remote)
    baseline = document.get("baseline", names[0])
    if baseline not in names:
        raise reader.fail("baseline", f"{baseline!r} is not an arm; the arms: {', '.join(names)}")
    for name, reference in compare_with.items():
        if reference not in names or reference == name:
            raise reader.fail(
                f"arms.{name}.compare_with", f"{reference!r} is not another arm of the file"
            )
    scenarios_table = (
        reader.table(document.get("scenarios"), "scenarios") if ("scenarios" in document) else {}
    )
    if not scenarios_table:
        raise reader.fail("scenarios", "declare at least one scenario ([scenarios.NAME])")
    scenarios = tuple(read_scenario(reader, name, entry) for name, entry in scenarios_table.items())
    # Each arm over the baseline, then each arm over the arm it declares, in the arms' order.
    comparisons = [(arm, baseline) for arm in names if arm != baseline]
    comparisons += [(arm, compare_with[arm]) for arm in names if arm in compare_with]
    ordered = (baseline, *(name for name in names if name != baseline))
    plan = PairedPlan(
        arms=ordered,
        scenarios=scenarios,
        baseline=baseline,
        comparisons=tuple(dict.fromkeys(comparisons)),
        services=tuple(sorted(services, key=lambda service: ordered.index(service.name))),
    )
    return CompareFile(
        path, plan, options, dataset_size, normalisations, file_allows_remote, arm_options
    )


def read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    """The file's text and its TOML document; FileError (one line, with the line number where
    TOML gives one) if it cannot be read or parsed."""
    try:
        text = path.read_text()
    except OSError as error:
        raise FileError(f"{path}: cannot read it: {error.strerror}") from None
    except UnicodeDecodeError:  # read_text decodes: a file that is not UTF-8 fails here
        raise FileError(f"{path}: not UTF-8 text") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        at = re.search(r"\(at line (\d+), column \d+\)", str(error))
        where = f"{path}:{at.group(1)}" if at else str(path)
        raise FileError(f"{where}: not valid TOML: {error}") from None
    except RecursionError:  # tomllib parses nested arrays and tables by recursion
        raise FileError(f"{path}: nested too deeply for a compare file") from None


def read_arms(
    reader: Reader, arms_table: dict[str, Any], folder: Path
) -> tuple[list[Service], dict[str, ArmOptions], dict[str, str]]:
    """Each arm's service, its options, and the arm it declares to be compared with."""
    services: list[Service] = []
    arm_options: dict[str, ArmOptions] = {}
    compare_with: dict[str, str] = {}
    for name, entry in arms_table.items():
        base = derived_from(reader, name, entry, arms_table)
        if base is None:
            service, extra, reference = read_arm(reader, name, entry, folder)
        else:
            service, extra, reference = read_derived_arm(
                reader, name, entry, base, arms_table[base], folder
            )
        if reference is not None:
            compare_with[name] = reference
        services.append(service)
        arm_options[name] = extra
    return services, arm_options, compare_with


def derived_from(reader: Reader, name: str, entry: Any, arms_table: dict[str, Any]) -> str | None:
    """The arm an arm is derived from (`from`), checked; None for an arm of its own."""
    if not isinstance(entry, dict):
        return None  # read_arm says what is wrong with it
    field = f"arms.{name}"
    if "from" not in entry:
        for key in ("with", "requirements"):
            if key in entry:
                raise reader.fail(
                    f"{field}.{key}",
                    "an environment derived from another arm's: name that arm with `from`",
                )
        return None
    base = reader.string(entry["from"], f"{field}.from")
    found = arms_table.get(base)
    if base == name or not isinstance(found, dict):
        raise reader.fail(f"{field}.from", f"{base!r} is not another arm of the file")
    if "from" in found:
        raise reader.fail(
            f"{field}.from", f"{base} is derived itself: derive from the arm it comes from"
        )
    if "command" not in found:
        raise reader.fail(
            f"{field}.from",
            f"{base} has no command (it is reached by its url): there is no environment to "
            "derive from",
        )
    return base


def read_derived_arm(
    reader: Reader,
    name: str,
    entry: dict[str, Any],
    base: str,
    base_entry: dict[str, Any],
    folder: Path,
) -> tuple[Service, ArmOptions, str | None]:
    """An arm with `from` and `with`: its base's command, cwd, env, health and start timeout
    (unless it gives its own), its own port; the base's program must be a virtual
    environment's interpreter, the environment its own is derived from."""
    field = f"arms.{name}"
    for key in ("command", "url", "container"):
        if key in entry:
            raise reader.fail(
                f"{field}.{key}",
                f"a derived arm runs {base}'s command in an environment of its own: leave "
                f"{key} out",
            )
    pins = reader.strings(entry.get("with", []), f"{field}.with")
    requirements = None
    if "requirements" in entry:
        requirements = folder / reader.string(entry["requirements"], f"{field}.requirements")
        if not requirements.is_file():
            raise reader.fail(f"{field}.requirements", f"{requirements} is not a file")
    if not pins and requirements is None:
        raise reader.fail(
            f"{field}.with",
            'expected the packages to pin over the base, e.g. ["pydantic==2.11.10", '
            '"pydantic-core==2.33.2"], or a requirements file (requirements = "path")',
        )
    for pin in pins:
        if not PIN.fullmatch(pin):
            raise reader.fail(
                f"{field}.with", f"{pin!r} is not a requirement such as pydantic==2.11.10"
            )
    merged = {key: base_entry[key] for key in INHERITED_KEYS if key in base_entry}
    merged |= {
        key: value for key, value in entry.items() if key not in ("from", "with", "requirements")
    }
    service, extra, reference = read_arm(reader, name, merged, folder)
    assert service.command is not None, "a derived arm has its base's command"
    if not is_environment_python(Path(service.command[0])):
        raise reader.fail(
            f"{field}.from",
            f"{base}'s command starts with {service.command[0]}, not a virtual environment's "
            "python (a folder with pyvenv.cfg): there is no environment to derive from",
        )
    return (
        service,
        replace(extra, derive_from=base, pins=pins, requirements=requirements),
        reference,
    )


def read_options(reader: Reader, value: Any) -> dict[str, Any]:
    table = reader.table(value, "options")
    reader.known_keys(table, tuple(OPTIONS), "options")
    options: dict[str, Any] = {}
    for key, item in table.items():
        field = f"options.{key}"
        if key == "pairs":
            options[key] = reader.integer(item, field, MIN_PAIRS_FOR_CI, 10_000)
        elif key in ("repeats", "users", "load_processes"):
            options[key] = reader.integer(item, field, 1, 1_000)
        elif key == "startup_samples":
            options[key] = reader.integer(item, field, 0, 100)
        elif key in ("pin", "calibrate"):
            options[key] = reader.boolean(item, field)
        elif key == "warmup_s":
            options[key] = reader.number(item, field, 0.5, 3600)
        else:  # window_s, settle_s
            options[key] = reader.number(item, field, 0.05, 600)
    window = options.get("window_s", 0.6)
    settle = options.get("settle_s", 0.2)
    if window < 2 * settle:
        raise reader.fail(
            "options.window_s",
            f"{window:g}s leaves too little after {settle:g}s of settling"
            " (at least twice settle_s)",
        )
    return {OPTIONS[key]: item for key, item in options.items()}


def read_database(reader: Reader, value: Any) -> int | None:
    if value is None:
        return None
    table = reader.table(value, "database")
    reader.known_keys(table, ("posts",), "database")
    return reader.integer(table.get("posts", 10_000), "database.posts", MIN_POSTS, 10_000_000)


def read_verify(reader: Reader, value: Any) -> tuple[str, ...]:
    table = reader.table(value, "verify")
    reader.known_keys(table, ("normalise",), "verify")
    chosen = reader.strings(table.get("normalise", list(NORMALISATIONS)), "verify.normalise")
    for name in chosen:
        if name not in NORMALISATIONS:
            raise reader.fail(
                "verify.normalise", f"{name!r} is none of {', '.join(NORMALISATIONS)}"
            )
    return chosen


def read_arm(
    reader: Reader, name: str, value: Any, folder: Path
) -> tuple[Service, ArmOptions, str | None]:
    field = reader.name(name, "arms", "an arm")
    entry = reader.table(value, field)
    reader.known_keys(entry, ARM_KEYS, field)
    label = reader.string(entry.get("label", name), f"{field}.label")
    health = reader.string(entry.get("health", "/health"), f"{field}.health")
    if not health.startswith("/"):
        raise reader.fail(f"{field}.health", f"a path starting with /, got {health!r}")
    extra = read_arm_options(reader, entry, field)
    reference = entry.get("compare_with")
    if reference is not None:
        reference = reader.string(reference, f"{field}.compare_with")
    url = read_url(reader, entry, field)
    if "command" not in entry:
        if url is None:
            raise reader.fail(field, "give a command to start it, or the url it answers on")
        for key in ("cwd", "env", "port", "own_process", "container"):
            if key in entry:
                raise reader.fail(f"{field}.{key}", "only an arm with a command takes it")
        service = Service(name, label, None, None, url, health)
        return service, extra, reference
    port = (
        reader.integer(entry.get("port"), f"{field}.port", 1, 65_535) if ("port" in entry) else None
    )
    if port is None:
        raise reader.fail(f"{field}.port", "an arm with a command needs the port it listens on")
    command = read_command(reader, entry["command"], f"{field}.command", port)
    # normpath, not resolve: a virtual environment's python is a symlink that must stay one.
    cwd = Path(os.path.normpath(folder / reader.string(entry.get("cwd", "."), f"{field}.cwd")))
    if not cwd.is_dir():
        raise reader.fail(f"{field}.cwd", f"{cwd} is not a folder")
    command = program_found(reader, command, cwd, field)
    environment = tuple(
        (key, item.replace(PORT_PLACEHOLDER, str(port)))
        for key, item in reader.string_table(entry.get("env", {}), f"{field}.env")
    )
    service = Service(
        name=name,
        label=label,
        command=command,
        port=port,
        base_url=url or local_url(port),
        health_path=health,
        cwd=cwd,
        environment=environment,
    )
    return service, extra, reference


def read_arm_options(reader: Reader, entry: dict[str, Any], field: str) -> ArmOptions:
    # A service the harness starts gets a minute to answer its health path; one given only by
    # its url is running already, so not answering within seconds means it is not.
    default_timeout_s = 60 if "command" in entry else RUNNING_ARM_TIMEOUT_S
    extra = ArmOptions(
        start_timeout_s=reader.number(
            entry.get("start_timeout_s", default_timeout_s), f"{field}.start_timeout_s", 1, 3600
        ),
        own_process=reader.boolean(entry.get("own_process", True), f"{field}.own_process"),
        container=(
            reader.string(entry["container"], f"{field}.container")
            if "container" in entry
            else None
        ),
    )
    if extra.container is not None and (extra.own_process or "command" not in entry):
        raise reader.fail(
            f"{field}.container",
            "names the container a launcher starts: give it with a command and own_process = false",
        )
    return extra


def read_url(reader: Reader, entry: dict[str, Any], field: str) -> str | None:
    url = entry.get("url")
    if url is None:
        return None
    url = reader.string(url, f"{field}.url").rstrip("/")
    if not re.match(r"^https?://[^/\s]+$", url):
        raise reader.fail(
            f"{field}.url", f"expected http(s)://host[:port] with no path, got {url!r}"
        )
    return url


def program_found(
    reader: Reader, command: tuple[str, ...], cwd: Path, field: str
) -> tuple[str, ...]:
    """The command with its program as a path that exists: a relative path is read from the
    arm's folder, a bare name from PATH."""
    if "/" in command[0] and not command[0].startswith("/"):  # a path: from the arm's folder
        command = (os.path.normpath(cwd / command[0]), *command[1:])
    elif "/" not in command[0]:  # a program on PATH
        found = shutil.which(command[0], path=caller_path())
        if found is None:
            raise reader.fail(f"{field}.command", f"{command[0]} is not on PATH")
        command = (found, *command[1:])
    if not Path(command[0]).exists():
        raise reader.fail(f"{field}.command", f"{command[0]} does not exist")
    return command


def read_command(reader: Reader, value: Any, field: str, port: int) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            words = shlex.split(value)
        except ValueError as error:
            raise reader.fail(field, f"cannot split it into words: {error}") from None
    else:
        words = list(reader.strings(value, field))
    if not words or not all(words):
        raise reader.fail(field, "expected a command (a string, or a list of words)")
    return tuple(word.replace(PORT_PLACEHOLDER, str(port)) for word in words)


def check_arms(
    reader: Reader,
    services: list[Service],
    file_allows: bool,
    flag_given: bool,
) -> None:
    """Ports not shared, and URLs on this machine (unless both the file and --allow-remote say
    otherwise)."""
    ports: dict[int, str] = {}
    for service in services:
        field = f"arms.{service.name}"
        if service.port is not None:
            if service.port in ports:
                raise reader.fail(
                    f"{field}.port", f"{service.port} is {ports[service.port]}'s port too"
                )
            ports[service.port] = service.name
        if not is_loopback(service.base_url) and not (file_allows and flag_given):
            needed = [
                *([] if file_allows else ["set allow_remote = true at the top of the file"]),
                *([] if flag_given else ["pass --allow-remote"]),
            ]
            remedy = " and ".join(needed)
            raise reader.fail(
                f"{field}.url",
                f"{service.base_url} is not on this machine (loopback); a load test aimed at "
                f"another host must be meant: {remedy}",
            )


def read_scenario(reader: Reader, name: str, value: Any) -> Scenario:
    field = reader.name(name, "scenarios", "a scenario")
    entry = reader.table(value, field)
    reader.known_keys(entry, SCENARIO_KEYS, field)
    label = reader.string(entry.get("label", name), f"{field}.label")
    method = reader.string(entry.get("method", "GET"), f"{field}.method").upper()
    if method not in METHODS:
        raise reader.fail(f"{field}.method", f"{method!r} is none of {', '.join(METHODS)}")
    path = reader.string(entry.get("path"), f"{field}.path") if "path" in entry else None
    if path is None or not path.startswith("/"):
        raise reader.fail(f"{field}.path", "expected the request's path, starting with /")
    body = read_body(reader, entry.get("body"), f"{field}.body")
    if body is not None and method == "GET":
        raise reader.fail(f"{field}.body", "a GET sends no body; set method")
    status = reader.integer(entry.get("status", 200), f"{field}.status", 100, 599)
    headers = reader.string_table(entry.get("headers", {}), f"{field}.headers")
    check = reader.table(entry.get("check", {}), f"{field}.check")
    reader.known_keys(check, CHECK_KEYS, f"{field}.check")
    marker, count = check.get("marker"), check.get("count")
    if (marker is None) != (count is None):
        raise reader.fail(f"{field}.check", "a marker needs its count, and a count its marker")
    request = Request(
        method=method,
        path=path,
        body=body,
        status=status,
        prefix=reader.string(check["prefix"], f"{field}.check.prefix") if "prefix" in check else "",
        marker=None if marker is None else reader.string(marker, f"{field}.check.marker"),
        count=None if count is None else reader.integer(count, f"{field}.check.count", 0, 10**9),
        item=reader.string(check.get("item", "item"), f"{field}.check.item"),
        exact=None
        if "exact" not in check
        else reader.string(check["exact"], f"{field}.check.exact"),
        headers=headers,
    )
    read_back = entry.get("read_back")
    if read_back is not None:
        read_back = reader.string(read_back, f"{field}.read_back")
        if not read_back.startswith("/") or method == "GET":
            raise reader.fail(
                f"{field}.read_back", "a path starting with /, for a scenario that writes"
            )
    return Scenario(
        name=name,
        label=label,
        request=request,
        fields=reader.strings(entry.get("fields", []), f"{field}.fields"),
        vary=reader.strings(entry.get("vary", []), f"{field}.vary"),
        read_back=read_back,
    )


def read_body(reader: Reader, value: Any, field: str) -> str | None:
    """A JSON body: a TOML table or list (the JSON it is), or a string holding JSON text with
    {arm} and {n} where the arm's name and each request's number go."""
    if value is None:
        return None
    if isinstance(value, dict | list):
        text = json.dumps(value)
    elif isinstance(value, str):
        text = value
    else:
        raise reader.fail(field, f"expected a table, a list or JSON text, got {describe(value)}")
    filled = text.replace(ARM_PLACEHOLDER, "arm").replace(COUNTER_PLACEHOLDER, "1")
    try:
        json.loads(filled)
    except ValueError as error:
        raise reader.fail(
            field, f"not JSON once {{arm}} and {{n}} are filled in: {error}"
        ) from None
    return text
