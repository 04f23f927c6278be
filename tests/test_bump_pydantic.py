"""What bump-pydantic (the Pydantic team's v1 -> v2 codemod, pinned in commons' dev group) does to
app_v1's code, and what it leaves for a person: checked from its output, run for real, and the
result imported under Pydantic 2. docs/migration.md shows the same diff and lists the same gaps.
"""

import difflib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from commons.arms import ARMS

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
APP_V1 = REPOSITORY_ROOT / "app_v1" / "src" / "app_v1"
BUMP_PYDANTIC = Path(sys.executable).parent / "bump-pydantic"  # the commons environment's
MIGRATION_PAGE = REPOSITORY_ROOT / "docs" / "migration.md"
# The diff's two names, as docs/migration.md shows them.
BEFORE = "app_v1/schemas.py (Pydantic 1 spelling)"
AFTER = "app_v1/schemas.py (after bump-pydantic 0.8.0)"
# What importing the bumped code under Pydantic 2 prints, and the call that breaks.
PROBE = """
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    from app_v1 import schemas, serialization
print("deprecations", sum("Deprecated" in str(w.message) for w in caught))
from datetime import UTC, datetime
from types import SimpleNamespace
moment = datetime(2020, 1, 1, tzinfo=UTC)
post = SimpleNamespace(id=1, published_at=moment, updated_at=moment, title="t", content="c")
posts = serialization.validate([post])
print("validated", posts.posts[0].is_published)
try:
    serialization.dump_json(posts)
except Exception as error:
    print("dump_json", type(error).__name__, error)
"""


def arm_python(name: str) -> Path:
    return REPOSITORY_ROOT / ARMS[name].environment / ".venv" / "bin" / "python"


def bump(tmp_path: Path, *, halfway: bool) -> Path:
    """app_v1 copied and run through bump-pydantic: spelt for Pydantic 1 (`from pydantic
    import`, as a service is before its migration), or as it is here, through pydantic.v1
    (after FastAPI's halfway step)."""
    package = tmp_path / "app_v1"
    shutil.copytree(APP_V1, package, ignore=shutil.ignore_patterns("__pycache__"))
    if not halfway:
        for path in package.glob("*.py"):
            text = re.sub(
                r"^from pydantic\.v1 import",
                "from pydantic import",
                path.read_text(),
                flags=re.MULTILINE,
            )
            path.write_text(text.replace("import pydantic.v1\n", "import pydantic\n"))
    shutil.copytree(package, tmp_path / "before")
    done = subprocess.run(
        # A path relative to where it runs: it refuses absolute ones.
        [str(BUMP_PYDANTIC), "--log-file", "bump.log", package.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return package


def run_under(arm: str, package_parent: Path) -> str:
    done = subprocess.run(
        [str(arm_python(arm)), "-c", PROBE],
        cwd=package_parent,  # the bumped app_v1 comes first on sys.path
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def schemas_diff(tmp_path: Path) -> str:
    before = (tmp_path / "before" / "schemas.py").read_text().splitlines()
    after = (tmp_path / "app_v1" / "schemas.py").read_text().splitlines()
    return "\n".join(difflib.unified_diff(before, after, BEFORE, AFTER, lineterm=""))


pytestmark = [
    pytest.mark.skipif(not BUMP_PYDANTIC.exists(), reason="bump-pydantic is missing"),
    pytest.mark.xdist_group("test_bump_pydantic"),  # one worker, so `bumped` is made once
]


@pytest.fixture(scope="module")
def bumped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """app_v1 as spelt for Pydantic 1, through bump-pydantic once for the tests that only read
    its output (the folder holding `before/` and the bumped `app_v1/`)."""
    parent = tmp_path_factory.mktemp("bumped")
    bump(parent, halfway=False)
    return parent


def test_its_diff_of_the_schemas_is_the_one_docs_migration_shows(bumped: Path) -> None:
    shown = re.findall(r"```diff\n(.*?)\n```", MIGRATION_PAGE.read_text(), flags=re.DOTALL)
    assert schemas_diff(bumped) in shown


def test_it_converts_the_config_and_leaves_the_validators_and_the_calls(bumped: Path) -> None:
    package = bumped / "app_v1"
    schemas = (package / "schemas.py").read_text()
    # Done: both `class Config: orm_mode = True` became model_config.
    assert schemas.count("model_config = ConfigDict(from_attributes=True)") == 2
    assert "orm_mode = True" not in schemas
    # Left: every validator stays a Pydantic 1 `validator` (deprecated in 2), the computed
    # is_published with a TODO, the three reused ones without a word; nothing becomes a
    # field_validator or a computed_field.
    uses = re.findall(r"^\s*(?:@validator\(|\w+ = validator\()", schemas, flags=re.MULTILINE)
    assert len(uses) == 4
    assert schemas.count("# TODO[pydantic]: We couldn't refactor the `validator`") == 1
    code = "\n".join(line for line in schemas.splitlines() if not line.lstrip().startswith("#"))
    assert "field_validator" not in code and "computed_field" not in code
    # Left: the other modules, whose Pydantic 1 calls (parse_obj, construct, .json()) it does
    # not touch.
    for name in ("serialization.py", "main.py"):
        assert (package / name).read_text() == (bumped / "before" / name).read_text(), name


def test_its_output_runs_on_pydantic_2_with_deprecations_and_one_break(bumped: Path) -> None:
    out = run_under("v2", bumped)
    deprecations = int(re.search(r"deprecations (\d+)", out).group(1))  # type: ignore[union-attr]
    assert deprecations >= 4  # one per remaining validator, and allow_reuse
    assert "validated True" in out  # the always=True validator still computes is_published
    # .json(separators=...) is gone in Pydantic 2: the ladder's dump_json breaks.
    assert "dump_json TypeError `dumps_kwargs` keyword arguments are no longer supported" in out


def test_run_after_the_halfway_step_it_breaks_the_models_silently(tmp_path: Path) -> None:
    """On code already moved to pydantic.v1, it still writes Pydantic 2's model_config into the
    pydantic.v1 models: there it is a field, not a configuration, and orm_mode is gone."""
    package = bump(tmp_path, halfway=True)
    schemas = (package / "schemas.py").read_text()
    assert "from pydantic.v1 import BaseModel" in schemas
    assert "from pydantic import ConfigDict" in schemas
    done = subprocess.run(
        [
            str(arm_python("v1-shim")),
            "-c",
            "from types import SimpleNamespace\n"
            "from app_v1 import schemas\n"
            "print(sorted(schemas.PostOut.__fields__))\n"
            "print(schemas.PostOut.__config__.orm_mode)\n"
            "try:\n"
            "    schemas.PostsOut.parse_obj({'posts': [SimpleNamespace(id=1)]})\n"
            "except Exception as error:\n"
            "    print(type(error).__name__, str(error).splitlines()[-1])",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    fields, orm_mode, reading = done.stdout.splitlines()
    assert "'model_config'" in fields  # a field of every post
    assert orm_mode == "False"  # so the posts can no longer be read from ORM objects:
    assert reading == "ValidationError   value is not a valid dict (type=type_error.dict)"
