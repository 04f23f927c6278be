"""Every module and file a comment, docstring or page names exists: code moves, and the text
that points at it must move too. A name is a path (`commons/src/commons/routes.py`, or its
tail, `load/paired.py`, as comments shorten it; a Markdown link's target is read from its own
page) or a dotted module (`commons.hardening.http_protocol:BoundedHttpToolsProtocol`)."""

import ast
import io
import re
import subprocess
import tokenize
from functools import cache
from pathlib import Path

import pytest

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
SOURCE_ROOTS = {  # the top-level package -> the folder it lives in
    "commons": "commons/src/commons",
    "loadtest": "loadtest/src/loadtest",
    "app_v1": "app_v1/src/app_v1",
    "app_v2": "app_v2/src/app_v2",
}
# Files that name paths of another time or place: test fixtures (runs written before a move),
# the run log, whose dated entries quote what was true then, and this test's own examples.
NOT_READ = ("loadtest/harness_tests/fixtures/", "docs/run-log.md", "tests/test_module_paths.py")
# Paths a file names on purpose though they are gone: where something was in older revisions.
OLD_PATHS = {
    # It reads the protocol "before" at any revision, from where that revision kept it.
    "scripts/hardening_cost.py": {
        "commons/http_protocol.py",
        "commons/src/commons/http_protocol.py",
    },
}
READ_SUFFIXES = (".py", ".md", ".sh", ".yml", ".toml", ".ini", "Dockerfile")
FILE_TYPES = "py|lua|sh|md|toml|svg|ini|yml|lock"
PATH = re.compile(rf"(?<![\w/.:<>{{*-])((?:\.\./|\./)?[\w.-]+(?:/[\w.-]+)+\.(?:{FILE_TYPES}))\b")
MODULE = re.compile(rf"(?<![\w./-])((?:{'|'.join(SOURCE_ROOTS)})(?:\.[A-Za-z_]\w*)+)")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
# A dotted name that ends like this is a file (`app_v1.log`), not a module.
FILE_ENDINGS = {"log", "json", "py", "md", "html", "svg", "txt", "toml", "lock", "prof", "csv"}


@cache
def tracked_files() -> tuple[str, ...]:
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPOSITORY_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return tuple(path for path in listing.splitlines() if (REPOSITORY_ROOT / path).exists())


def files_to_read() -> list[str]:
    return [
        path
        for path in tracked_files()
        if path.endswith(READ_SUFFIXES) and not path.startswith(NOT_READ)
    ]


@cache
def tracked_folders() -> frozenset[str]:
    return frozenset(part for path in tracked_files() for part in path.split("/")[:-1])


def is_ours(name: str) -> bool:
    """A path into this repository, not into a library (`fastapi/encoders.py`), an app the
    scale mode generates or a container's file system: its first folder is one of ours."""
    first = name.lstrip("./").split("/")[0]
    return name.startswith("../") or first in tracked_folders()


def path_exists(name: str, page: str) -> bool:
    """As written from the repository's root or from the naming file's folder, or as the tail
    of a file's path (`load/paired.py`, `commons/routes.py`: the package and the module);
    `...` stands for any folders between."""
    candidates = [REPOSITORY_ROOT / name, (REPOSITORY_ROOT / page).parent / name]
    if any(candidate.exists() for candidate in candidates):
        return True
    tail = re.escape("/" + name.lstrip("./")).replace(re.escape("/..."), "(/[^/]+)+")
    return any(re.search(tail + "$", "/" + path) for path in tracked_files())


@cache
def top_level_names(module_file: Path) -> frozenset[str]:
    names = set()
    for node in ast.parse(module_file.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return frozenset(names)


def module_exists(dotted: str) -> bool:
    """Its packages and module exist; what follows the module is a name the module defines."""
    parts = dotted.split(".")
    where = REPOSITORY_ROOT / SOURCE_ROOTS[parts[0]]
    for position, part in enumerate(parts[1:], start=1):
        if (where / part).is_dir():
            where = where / part
        elif (where / f"{part}.py").is_file():
            where = where / f"{part}.py"
            rest = parts[position + 1 :]
            return not rest or rest[0] in top_level_names(where)
        else:
            init = where / "__init__.py"
            return where.is_dir() and init.is_file() and part in top_level_names(init)
    return True


def prose_of(page: str) -> str:
    """What a person wrote in the file: all of it, but of Python code only its comments and
    strings (`app_v1.routes` in code is an attribute, not a module)."""
    text = (REPOSITORY_ROOT / page).read_text(errors="replace")
    if not page.endswith(".py"):
        return text
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    kept = (tokenize.COMMENT, tokenize.STRING)  # an f-string is one STRING before 3.12
    return "\n".join(token.string for token in tokens if token.type in kept)


def names_in(page: str) -> tuple[list[str], list[str]]:
    text = prose_of(page)
    paths = [name for name in PATH.findall(text) if is_ours(name)]
    if page.endswith(".md"):
        paths += [
            target for target in MARKDOWN_LINK.findall(text) if "://" not in target and target
        ]
    modules = [name for name in MODULE.findall(text) if name.split(".")[-1] not in FILE_ENDINGS]
    return paths, modules


@pytest.mark.parametrize("page", files_to_read())
def test_every_path_and_module_a_file_names_exists(page: str) -> None:
    paths, modules = names_in(page)
    old = OLD_PATHS.get(page, set())
    missing = [name for name in paths if name not in old and not path_exists(name, page)]
    missing += [name for name in modules if not module_exists(name)]
    assert not missing, f"{page} names what does not exist: {sorted(set(missing))}"


def test_the_check_finds_a_moved_module_and_a_missing_file() -> None:
    assert module_exists("commons.hardening.http_protocol")
    assert not module_exists("commons.http_protocol")
    assert module_exists("loadtest.load.paired.run_schedule")
    assert not module_exists("loadtest.load.paired.paired_session")
    assert path_exists("load/paired.py", "README.md")
    assert not path_exists("load/nowhere.py", "README.md")
    assert path_exists("../loadtest/src/loadtest/cli.py", "docs/design.md")
    assert path_exists("loadtest/.../modes/micro/runner.py", "README.md")
    assert not is_ours("fastapi/encoders.py")
