"""Which Python build the lab measures on: build facts read from a real interpreter, how PGO and
LTO are known (configure flags, or Debian's package), and the bootstrap's choice of interpreter
(LAB_PYTHON first, then an optimised 3.11, then any 3.11, saying so)."""

import ast
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_tests.runner import REPOSITORY_ROOT
from loadtest.lab import interpreter
from loadtest.lab.host import host_facts, interpreter_text
from loadtest.lab.interpreter import build_facts, describe, is_optimised, pick

SCRIPT = REPOSITORY_ROOT / "loadtest" / "src" / "loadtest" / "lab" / "interpreter.py"


def fake_python(tmp_path: Path, name: str, **raw: object) -> Path:
    """An executable that answers the facts query as an interpreter with `raw` would."""
    answer = {
        "implementation": "CPython",
        "version": "3.11.9",
        "real_executable": str(tmp_path / name),
        "configure_pgo": False,
        "configure_lto": False,
        "shared": False,
        "machine": "x86_64",
    } | raw
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\ncat <<'END'\n{json.dumps(answer)}\nEND\n")
    path.chmod(0o755)
    return path


def test_the_running_interpreter_is_described_as_it_is() -> None:
    facts = build_facts(sys.executable)
    assert facts["implementation"] == platform.python_implementation()
    assert facts["version"] == platform.python_version()
    assert Path(str(facts["executable"])).exists()
    assert isinstance(facts["pgo"], bool) and isinstance(facts["lto"], bool)
    assert facts["known_from"]


def test_configure_flags_say_pgo_and_lto(tmp_path: Path) -> None:
    both = build_facts(fake_python(tmp_path, "both", configure_pgo=True, configure_lto=True))
    assert (both["pgo"], both["lto"]) == (True, True)
    assert "configure flags" in str(both["known_from"])
    assert describe(both) == "CPython 3.11.9, PGO+LTO" and is_optimised(both)
    pgo_only = build_facts(fake_python(tmp_path, "pgo", configure_pgo=True))
    assert describe(pgo_only) == "CPython 3.11.9, PGO" and not is_optimised(pgo_only)


def test_an_interpreter_configured_with_neither_is_not_optimised(tmp_path: Path) -> None:
    plain = build_facts(fake_python(tmp_path, "plain", shared=True))
    assert (plain["pgo"], plain["lto"], plain["shared"]) == (False, False, True)
    assert describe(plain) == "CPython 3.11.9, no PGO/LTO"
    assert "neither PGO nor LTO" in str(plain["known_from"])


def test_an_interpreter_that_cannot_answer_is_one_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'no such module' >&2\nexit 1\n")
    broken.chmod(0o755)
    with pytest.raises(RuntimeError, match="cannot ask .*broken about its build: no such module"):
        build_facts(broken)


@pytest.mark.skipif(
    not (Path("/usr/bin/python3.11").exists() and shutil.which("dpkg-query")),
    reason="Debian's python3.11 is not installed here",
)
def test_debians_own_build_is_known_from_its_package() -> None:
    """Debian builds with PGO and LTO but keeps the flags out of sysconfig (#934771)."""
    facts = build_facts("/usr/bin/python3.11")
    assert (facts["pgo"], facts["lto"]) == (True, True)
    assert str(facts["known_from"]).startswith("Debian's package python3.11")


def test_lab_python_is_the_stated_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAB_PYTHON", "/opt/my/python3.11")
    assert pick() == ("/opt/my/python3.11", "LAB_PYTHON")


def test_an_optimised_311_wins_over_the_first_one_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LAB_PYTHON", raising=False)
    plain = fake_python(tmp_path, "plain")
    newer = fake_python(tmp_path, "newer", version="3.12.1", configure_pgo=True, configure_lto=True)
    fast = fake_python(tmp_path, "fast", configure_pgo=True, configure_lto=True)
    monkeypatch.setattr(interpreter, "candidates", lambda: [str(plain), str(newer), str(fast)])
    path, why = pick()
    assert path == str(fast)  # not the 3.12 one: the lab is locked and measured on 3.11
    assert why == "optimised build (CPython 3.11.9, PGO+LTO)"


def test_without_an_optimised_build_the_first_311_and_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LAB_PYTHON", raising=False)
    first, second = fake_python(tmp_path, "first"), fake_python(tmp_path, "second")
    monkeypatch.setattr(interpreter, "candidates", lambda: [str(first), str(second)])
    assert pick() == (str(first), "no optimised Python 3.11 here; CPython 3.11.9, no PGO/LTO")


def test_without_any_311_uv_decides_and_the_reason_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LAB_PYTHON", raising=False)
    monkeypatch.setattr(interpreter, "candidates", lambda: [])
    assert pick() == (None, "no Python 3.11 here; uv picks one by the projects' requires-python")


def test_the_script_picks_an_interpreter_that_exists_and_says_why() -> None:
    """What scripts/bootstrap.sh runs, before any environment exists (standard library only)."""
    environment = {key: value for key, value in os.environ.items() if key != "LAB_PYTHON"}
    answer = subprocess.run(
        ["python3", "-I", str(SCRIPT), "--pick"],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    chosen = answer.stdout.strip()
    assert chosen == "" or Path(chosen).exists()
    # A note only where the choice is not the stated default (an optimised build, LAB_PYTHON).
    assert answer.stderr == "" or answer.stderr.startswith("note: the lab's environments: ")
    assert (chosen == "") <= ("uv decides" in answer.stderr)


def test_the_script_runs_on_an_older_python3_too() -> None:
    """The bootstrap runs it with whatever python3 the machine has: nothing in it may need 3.10+
    when the module is loaded (annotations are strings)."""
    source = SCRIPT.read_text()
    assert source.index("from __future__ import annotations") < source.index("\nimport json")
    ast.parse(source, feature_version=(3, 8))


def test_results_record_the_arms_build_and_reports_say_it() -> None:
    host = host_facts()
    facts = host["interpreter"]
    assert isinstance(facts, dict) and facts["where"] == "local"
    assert interpreter_text(host) == f"Python {facts['version']} ({describe(facts)}, local)"
    old_run = {"python": "3.11.7"}  # results.json before the build was recorded
    assert interpreter_text(old_run) == "Python 3.11.7 (its build was not recorded)"
