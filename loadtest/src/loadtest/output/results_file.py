"""results.json: one file format for every mode (docs/results.md documents it). Each starts
with `schema_version` and `kind`; every ratio in it is a PairedRatio (estimate, ci95_low,
ci95_high, ci95_half_width, pairs, pair_min, pair_max, flags). Files written by earlier
versions of the lab are read by upgrading them in memory, never on disk."""

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from loadtest.lab.errors import LabError
from loadtest.lab.files import write_text_safely
from loadtest.load.slots import Slot

SCHEMA_VERSION = 5
# What each version changed, for the reader of an old file:
#   2: the benchmark, two arms; 3: start-up and the third arm (kind implied: benchmark);
#   ladder, micro and profile runs were written without a version before 4;
#   4: `kind` in every file, and one spelling of a ratio in all of them;
#   5: a window's `arm` is the arm alone and its `variant` the ladder's rung or the sweep's
#      cell (before, `arm` was both: "v2/plain_orjson" in the ladder, "flat-10@v2" in the
#      sweep); every header has `elapsed_s`.
READABLE_VERSIONS = (2, 3, 4, 5)
# The kinds written without a version, before version 4.
UNVERSIONED_KINDS = ("ladder", "micro", "profile")


def run_header(
    started_at: datetime, finished_at: datetime, host: dict[str, object]
) -> dict[str, Any]:
    """What every mode's results.json opens with: when the run started and finished, how long
    it took, and the machine (read as the run began, before pinning narrowed what the runner
    sees of it: modes/session.py)."""
    return {
        "started_at": started_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "elapsed_s": round((finished_at - started_at).total_seconds(), 1),
        "host": host,
    }


def as_document(kind: str, results: dict[str, Any]) -> dict[str, Any]:
    """What results.json holds: the version and the kind first, then the mode's results."""
    return {"schema_version": SCHEMA_VERSION, "kind": kind, **results}


def write_results(run_dir: Path, kind: str, results: dict[str, Any]) -> dict[str, Any]:
    """Writes results.json; returns what it wrote (what the reports read, as they would read
    the file)."""
    document = as_document(kind, results)
    write_text_safely((run_dir / "results.json"), json.dumps(document, indent=2) + "\n")
    return document


def read_results(run_dir: Path, kinds: tuple[str, ...]) -> dict[str, Any]:
    """A run's results.json as this version writes it; LabError (one line) for anything that
    is not a run folder, or a file this version cannot read (`kinds`: the modes' kinds, from
    their registry)."""
    path = run_dir / "results.json"
    if not path.is_file():
        raise LabError(f"{run_dir} holds no results.json (is it a run directory?)")
    try:
        document = json.loads(path.read_text(), parse_constant=refuse_non_finite)
    except (OSError, ValueError) as error:
        raise LabError(f"cannot read {path}: {error}".splitlines()[0]) from None
    except RecursionError:
        raise LabError(f"cannot read {path}: nested too deeply for a results file") from None
    if not isinstance(document, dict):
        raise LabError(f"{path} is not a results file (no JSON object)")
    with reporting_from(path):
        return upgrade(document, path, kinds)


def refuse_non_finite(constant: str) -> float:
    """NaN and Infinity are not JSON (Python's json reads them): no figure the lab writes is."""
    raise ValueError(f"{constant} is not a number a results file holds")


@contextmanager
def reporting_from(path: Path | str) -> Iterator[None]:
    """Around code that reads a results file's figures: a file that is JSON of the right kind
    but not as the lab wrote it (a field missing, a string where a number goes, a list where a
    table goes) stops in one line naming the file, not with a traceback (issue 53)."""
    try:
        yield
    except KeyError as error:
        raise LabError(f"{path} lacks {error} where the lab writes one{EDITED}") from error
    except (TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as error:
        detail = type(error).__name__ + (
            f": {str(error).splitlines()[0][:160]}" if str(error) else ""
        )
        raise LabError(f"{path} holds a value the lab never writes ({detail}){EDITED}") from error
    except RecursionError:
        raise LabError(f"{path} is nested too deeply for a results file{EDITED}") from None


EDITED = "; was it edited? docs/results.md describes the format"


def upgrade(document: dict[str, Any], path: Path, kinds: tuple[str, ...]) -> dict[str, Any]:
    version = document.get("schema_version")
    kind = document.get("kind", "benchmark" if version in (2, 3) else None)
    if version is None and kind in UNVERSIONED_KINDS:
        version = 1
    if version == SCHEMA_VERSION and kind in kinds:
        return document
    if version not in (1, *READABLE_VERSIONS) or kind not in kinds:
        raise LabError(
            f"{path} has schema_version {version!r} and kind {kind!r}; this version of the lab "
            f"reads versions {READABLE_VERSIONS[0]}-{SCHEMA_VERSION} of the kinds "
            f"{', '.join(kinds)} (a newer file needs a newer lab)"
        )
    upgraded = add_elapsed(respell_ratios(document))
    if isinstance(upgraded.get("windows"), list):
        upgraded["windows"] = [split_window_arm(window, kind) for window in upgraded["windows"]]
    return {**upgraded, "schema_version": SCHEMA_VERSION, "kind": kind, "upgraded_from": version}


# Before version 4 a ratio was spelt three ways: {ratio, ci95_low, ci95_high} (the benchmark,
# the ladder's app over app), {median, ci95_low, ...} (the ladder's speed-ups and shares) and
# {ratio, ci_low, ci_high} (micro); a repeat's median was {repeat, pairs, ratio}.
OLD_SPELLINGS: list[tuple[Callable[[dict[str, Any]], bool], dict[str, str]]] = [
    (lambda d: "ci95_low" in d and "ratio" in d, {"ratio": "estimate"}),
    (lambda d: "ci95_low" in d and "median" in d, {"median": "estimate"}),
    (
        lambda d: "ci_low" in d and "ratio" in d,
        {"ratio": "estimate", "ci_low": "ci95_low", "ci_high": "ci95_high"},
    ),
    (lambda d: set(d) == {"repeat", "pairs", "ratio"}, {"ratio": "estimate"}),
]


def respell_ratios(value: Any) -> Any:
    if isinstance(value, list):
        return [respell_ratios(item) for item in value]
    if not isinstance(value, dict):
        return value
    renamed = next((names for matches, names in OLD_SPELLINGS if matches(value)), {})
    return {renamed.get(key, key): respell_ratios(item) for key, item in value.items()}


def split_window_arm(window: dict[str, Any], kind: str) -> dict[str, Any]:
    """A window of a file before version 5: its arm and its variant apart (the ladder wrote
    "v2/plain_orjson", today's spelling of a slot; the sweep "flat-10@v2")."""
    if not isinstance(window, dict) or "variant" in window or "arm" not in window:
        return window
    arm, variant = str(window["arm"]), None
    if kind == "ladder":
        slot = Slot.parse(arm)
        arm, variant = slot.arm, slot.variant
    elif kind == "sweep" and "@" in arm:
        variant, _, arm = arm.rpartition("@")
    return {**window, "arm": arm, "variant": variant}


def add_elapsed(document: dict[str, Any]) -> dict[str, Any]:
    """A header from before version 5 without `elapsed_s` (the ladder's, the sweep's, the
    profile's): from its start and finish."""
    if "elapsed_s" in document or not {"started_at", "finished_at"} <= set(document):
        return document
    try:
        started = datetime.fromisoformat(document["started_at"])
        finished = datetime.fromisoformat(document["finished_at"])
    except (TypeError, ValueError):
        return document
    return {**document, "elapsed_s": round((finished - started).total_seconds(), 1)}
