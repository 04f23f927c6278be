"""The scale mode's generated apps: deterministic, the promised mix, and, started for real in
every arm's environment, every route answers its model and OpenAPI lists every route."""

import filecmp
import os
from pathlib import Path
from typing import Any

import pytest

from harness_tests.runner import free_port
from loadtest.lab.arms import ARM_NAMES, arm_python
from loadtest.lab.errors import LabError
from loadtest.modes.scale.generator import (
    KINDS,
    MAX_NESTING,
    ScaleApp,
    generate,
    main_module,
    models_module,
    plan_models,
    router_module,
    routes_of,
)
from loadtest.modes.scale.runner import compile_app, measure_process
from loadtest.modes.scale.subjects import Subject, comparisons, plan_subjects


def test_the_same_seed_gives_the_same_app_and_another_seed_another(tmp_path: Path) -> None:
    app = ScaleApp("v2", 30, seed=7)
    first, second = generate(app, tmp_path / "a"), generate(app, tmp_path / "b")
    other = generate(ScaleApp("v2", 30, seed=8), tmp_path / "c")
    names = sorted(path.name for path in (first / "scale_app").iterdir())
    assert names == sorted(path.name for path in (second / "scale_app").iterdir())
    _, mismatch, errors = filecmp.cmpfiles(first / "scale_app", second / "scale_app", names)
    assert mismatch == errors == []
    assert (first / "scale_app/models.py").read_text() != (
        other / "scale_app/models.py"
    ).read_text()


def test_the_models_carry_the_promised_mix() -> None:
    models = plan_models(500, seed=0)
    kinds = {field.kind for model in models for field in model.fields}
    assert kinds == set(KINDS)
    assert max(model.depth for model in models) == MAX_NESTING
    assert sum(model.validator for model in models) == 167  # every third
    assert sum(model.computed for model in models) == 125  # every fourth
    for model in models:  # nesting only refers back, so every module imports in order
        assert all(field.target is None or field.target < model.index for field in model.fields)


def test_each_idiom_spells_its_major() -> None:
    app_v1 = ScaleApp("v1", 12)
    app_v2 = ScaleApp("v2", 12, defer_build=True)
    assert "include_router" in main_module(app_v1)
    flat = ScaleApp("v1", 12, flat=True)
    assert "include_router" not in main_module(flat) and "APIRouter(" not in router_module(
        0, plan_models(12, 0)[:10], flat=True
    )
    with pytest.raises(ValueError, match="defer_build is Pydantic 2's"):
        ScaleApp("v1", 12, defer_build=True)
    assert app_v1.routes == 24 and app_v1.routers == 2
    assert len(routes_of(app_v1)) == 24
    v1_source = models_module(plan_models(12, 0), app_v1)
    v2_source = models_module(plan_models(12, 0), app_v2)
    assert "from pydantic.v1 import" in v1_source and "orm_mode = True" in v1_source
    assert "@validator(" in v1_source and "@computed_field" not in v1_source
    assert "defer_build=True" in v2_source and "@computed_field" in v2_source
    assert "@field_validator(" in v2_source and "orm_mode" not in v2_source


def verified_process(
    subject: Subject, app: ScaleApp, folder: Path
) -> tuple[dict[str, float], dict[str, Any]]:
    """What a run does before timing: one process of the app, every route checked."""
    return measure_process(
        subject, app, folder, port=free_port(), cpus=None, log_path=folder / "app.log", verify=True
    )


@pytest.mark.parametrize(
    "subject",
    plan_subjects(ARM_NAMES, defer_build=True, flat=True),
    ids=lambda subject: subject.key,
)
def test_every_generated_app_answers_every_route_in_its_arm(
    subject: Subject, tmp_path: Path
) -> None:
    """measure_process(verify=True) is what a run does before timing: every route answers 200
    with its model's JSON (computed fields included), OpenAPI lists every route."""
    app = ScaleApp(subject.idiom, 23, subject.defer_build, flat=subject.flat)
    folder = generate(app, tmp_path / "app")
    figures, versions = verified_process(subject, app, folder)
    assert figures["to_health_s"] > figures["import_s"] > 0
    assert figures["rss_routes_mib"] >= figures["uss_routes_mib"] > 0
    assert versions["pydantic"].startswith("1." if subject.arm == "v1" else "2.")


def test_a_route_that_answers_wrong_stops_the_run(tmp_path: Path) -> None:
    """The verification can fail: an app whose GET answers a wrong id is refused in one line."""
    app = ScaleApp("v2", 3)
    folder = generate(app, tmp_path / "app")
    routes = folder / "scale_app" / "routes_000.py"
    routes.write_text(routes.read_text().replace('"id": item_id', '"id": item_id + 1', 1))
    with pytest.raises(LabError, match=r"v2, 3 models: GET /api/g0/m0/1000 answered other JSON"):
        verified_process(Subject("v2"), app, folder)


def test_the_bytecode_of_every_module_is_written_even_when_python_would_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    folder = generate(ScaleApp("v1", 12), tmp_path / "app")
    compile_app(folder, arm_python("v1"))
    modules = sorted(path.stem for path in (folder / "scale_app").glob("*.py"))
    compiled = sorted(
        path.name.split(".")[0] for path in (folder / "scale_app/__pycache__").glob("*.pyc")
    )
    assert compiled == modules
    broken = folder / "scale_app/main.py"
    broken.write_text("def broken(:\n")
    os.utime(broken, (broken.stat().st_atime, broken.stat().st_mtime + 10))  # newer than its pyc
    with pytest.raises(LabError, match="cannot compile the generated app"):
        compile_app(folder, arm_python("v1"))


def test_each_subject_is_compared_with_v1_and_each_variant_with_its_own_arm() -> None:
    subjects = plan_subjects(("v1", "v2"), defer_build=True, flat=True)
    keys = [subject.key for subject in subjects]
    assert keys == ["v1", "v1+flat", "v2", "v2+defer_build", "v2+flat"]
    assert comparisons(keys) == [
        ("v1+flat", "v1"),
        ("v2", "v1"),
        ("v2+defer_build", "v1"),
        ("v2+flat", "v1"),
        ("v2+defer_build", "v2"),
        ("v2+flat", "v2"),
    ]
