"""The scale mode's generated apps: deterministic, each shape as promised, and, started for real
in every arm's environment, every route answers its model and OpenAPI lists every route."""

import filecmp
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness_tests.runner import free_port
from loadtest.generated.apps import compile_app
from loadtest.generated.generator import (
    ScaleApp,
    generate,
    groups_of,
    main_module,
    router_module,
    routes_of,
)
from loadtest.generated.process import Unfinished, measure_process
from loadtest.generated.shapes import SHAPES
from loadtest.generated.shapes.service import KINDS, MAX_NESTING, plan_models
from loadtest.generated.subjects import Subject, comparisons, plan_subjects
from loadtest.lab.arms import ARM_NAMES, arm_python
from loadtest.lab.errors import LabError
from loadtest.lab.processes import child_environment
from loadtest.modes.scale.runner import StoppedPhases

# Every shape at a size that takes its every path quickly: (shape, size).
SMALL = {"service": 23, "chain": 5, "recursive": 3, "generic": 5, "union": 3, "routes": 4}


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


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_writes_the_same_app_twice(shape: str, tmp_path: Path) -> None:
    app = ScaleApp("v1", SMALL[shape], shape=shape)
    first, second = generate(app, tmp_path / "a"), generate(app, tmp_path / "b")
    names = sorted(path.name for path in (first / "scale_app").iterdir())
    _, mismatch, errors = filecmp.cmpfiles(first / "scale_app", second / "scale_app", names)
    assert names and mismatch == errors == []
    assert routes_of(app) == routes_of(app)


def test_the_service_models_carry_the_promised_mix() -> None:
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
    assert "include_router" in main_module(app_v1, app_v1.source())
    flat = ScaleApp("v1", 12, flat=True)
    endpoints = groups_of(flat.source())[0]
    assert "include_router" not in main_module(flat, flat.source())
    assert "APIRouter(" not in router_module(0, endpoints, flat=True)
    with pytest.raises(ValueError, match="defer_build is Pydantic 2's"):
        ScaleApp("v1", 12, defer_build=True)
    assert len(routes_of(app_v1)) == 24 and len(groups_of(app_v1.source())) == 2
    v1_source, v2_source = app_v1.source().models_module, app_v2.source().models_module
    assert "from pydantic.v1 import" in v1_source and "orm_mode = True" in v1_source
    assert "@validator(" in v1_source and "@computed_field" not in v1_source
    assert "defer_build=True" in v2_source and "@computed_field" in v2_source
    assert "@field_validator(" in v2_source and "orm_mode" not in v2_source


def test_each_shape_is_the_shape_it_says() -> None:
    chain = ScaleApp("v2", 6, shape="chain").source().models_module
    assert 'next: Optional["Node0005"]' in chain and 'first: Optional["Node0000"]' in chain
    assert "Node0005.model_rebuild()" in chain
    backward = ScaleApp("v1", 6, shape="chain", variant="backward").source().models_module
    assert "next:" not in backward and "Node0005.update_forward_refs()" in backward
    assert (
        'children: List["Tree0001"]' in ScaleApp("v1", 2, shape="recursive").source().models_module
    )
    generic = ScaleApp("v1", 3, shape="generic").source()
    assert "class Page(GenericModel, Generic[T])" in generic.models_module
    assert {endpoint.response_model for endpoint in generic.endpoints} >= {"Page[Model0002]"}
    assert (
        "class Page(BaseModel, Generic[T])"
        in ScaleApp("v2", 3, shape="generic").source().models_module
    )
    union = ScaleApp("v2", 5, shape="union").source().models_module
    assert "AnyVariant = Union[Variant00, Variant01, Variant02, Variant03, Variant04]" in union
    assert 'kind: Literal["v04"]' in union
    tagged = ScaleApp("v1", 5, shape="union", variant="tagged").source().models_module
    assert 'Field(discriminator="kind")]' in tagged
    routes = ScaleApp("v2", 10, shape="routes").source()
    assert routes.models == 100 and len(routes.endpoints) == 1000
    with pytest.raises(ValueError, match="an even number"):
        ScaleApp("v2", 3, shape="routes").source()
    with pytest.raises(ValueError, match="no variant 'tagged'"):
        ScaleApp("v2", 3, shape="chain", variant="tagged")


def verified_process(
    subject: Subject, app: ScaleApp, folder: Path, bound_s: float = 60
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a run does before timing: one process of the app, every route checked."""
    return measure_process(
        subject,
        app,
        folder,
        port=free_port(),
        cpus=None,
        log_path=folder / "app.log",
        verify=True,
        bound_s=bound_s,
    )


def every_subject() -> list[tuple[str, Subject]]:
    found = []
    for shape in SHAPES.values():
        flat_and_defer = shape.name == "service"  # the variants every shape's apps share
        found += [
            (shape.name, subject)
            for subject in plan_subjects(
                ARM_NAMES, flat_and_defer, flat_and_defer, tuple(shape.variants)
            )
        ]
    return found


@pytest.mark.parametrize(
    ("shape", "subject"),
    every_subject(),
    ids=lambda item: item if isinstance(item, str) else item.key,
)
def test_every_generated_app_answers_every_route_in_its_arm(
    shape: str, subject: Subject, tmp_path: Path
) -> None:
    """measure_process(verify=True) is what a run does before timing: every route answers 200
    with its model's JSON (computed fields, the union's chosen member and the defaults of the
    references included), OpenAPI lists every route."""
    app = ScaleApp(
        subject.idiom,
        SMALL[shape],
        subject.defer_build,
        flat=subject.flat,
        shape=shape,
        variant=subject.variant,
    )
    folder = generate(app, tmp_path / "app")
    figures, versions = verified_process(subject, app, folder)
    assert figures["to_health_s"] > figures["import_s"] > 0
    assert figures["rss_routes_mib"] >= figures["uss_routes_mib"] > 0
    assert figures["openapi_s"] > 0 and "unfinished_metrics" not in figures
    on_2 = subject.arm != "v1"
    assert versions["pydantic"].startswith("2." if on_2 else "1.")
    assert (versions["pydantic_core"] or "").startswith("2." if on_2 else "")
    assert on_2 or versions["pydantic_core"] is None


@pytest.mark.parametrize("shape", list(SHAPES))
def test_pydantic_2_code_imports_without_a_deprecation_warning(shape: str, tmp_path: Path) -> None:
    """Each major's own idiom: the v2 apps use nothing Pydantic 2 deprecates (the warnings are
    errors here)."""
    variants = [None, *SHAPES[shape].variants]
    for variant in variants:
        app = ScaleApp("v2", SMALL[shape], shape=shape, variant=variant)
        folder = generate(app, tmp_path / f"{variant}")
        imported = subprocess.run(
            [
                str(arm_python("v2")),
                "-W",
                "error::DeprecationWarning",
                "-c",
                "import scale_app.main",
            ],
            env=child_environment(PYTHONPATH=str(folder)),
            capture_output=True,
            text=True,
            check=False,
        )
        assert imported.returncode == 0, imported.stderr[-2000:]


def test_a_route_that_answers_wrong_stops_the_run(tmp_path: Path) -> None:
    """The verification can fail: an app whose GET answers a wrong id is refused in one line."""
    app = ScaleApp("v2", 3)
    folder = generate(app, tmp_path / "app")
    routes = folder / "scale_app" / "routes_000.py"
    routes.write_text(routes.read_text().replace('"id": item_id', '"id": item_id + 1', 1))
    with pytest.raises(LabError, match=r"v2, 3 models: GET /api/g0/m0/1000 answered other JSON"):
        verified_process(Subject("v2"), app, folder)


def test_an_app_that_fails_or_takes_too_long_is_a_result_not_a_crash(tmp_path: Path) -> None:
    app = ScaleApp("v2", 3)
    folder = generate(app, tmp_path / "app")
    with pytest.raises(Unfinished, match=r"^over 0\.2 s$"):
        verified_process(Subject("v2"), app, folder, bound_s=0.2)  # no app starts that fast
    models = folder / "scale_app" / "models.py"
    models.write_text(models.read_text() + "\nraise RecursionError('maximum recursion depth')\n")
    with pytest.raises(Unfinished, match=r"^failed: RecursionError: maximum recursion depth$"):
        verified_process(Subject("v2"), app, folder)


def test_a_phase_stopped_at_a_size_still_runs_at_the_smaller_ones() -> None:
    """v2+backward's /openapi.json fails at 100 models (chain): the timed processes at 10 still
    ask for it, those at 100 and 300 do not."""
    stopped = StoppedPhases()
    assert stopped.stop("v2+backward", "openapi", 100, "failed: /openapi.json 500")
    assert not stopped.stop("v2+backward", "openapi", 300, "failed: /openapi.json 500")
    assert stopped.at("v2+backward", 10) == {}
    assert stopped.at("v2+backward", 100) == {"openapi": "failed: /openapi.json 500"}
    later = "not run: failed: /openapi.json 500 at 100"
    assert stopped.at("v2+backward", 300) == {"openapi": later}
    assert stopped.at("v2", 300) == {}


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
    assert comparisons(subjects) == [
        ("v1+flat", "v1"),
        ("v2", "v1"),
        ("v2+defer_build", "v1"),
        ("v2+flat", "v1"),
        ("v2+defer_build", "v2"),
        ("v2+flat", "v2"),
    ]


def test_a_shapes_variant_is_compared_with_v1_in_the_same_variant() -> None:
    subjects = plan_subjects(("v1", "v2"), defer_build=False, variants=("tagged",))
    assert [subject.key for subject in subjects] == ["v1", "v1+tagged", "v2", "v2+tagged"]
    assert comparisons(subjects) == [
        ("v2", "v1"),
        ("v2+tagged", "v1+tagged"),
        ("v1+tagged", "v1"),
        ("v2+tagged", "v2"),
    ]
