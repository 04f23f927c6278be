"""The profile mode's settings."""

from dataclasses import dataclass
from pathlib import Path

from loadtest.lab.paths import DEFAULT_RESULTS_DIR

# The lab's scenarios it profiles (load/scenarios.py), in the order of its tables.
PROFILED_SCENARIOS = ("synthetic", "read")
# The profile compares the two Pydantic majors unless --apps says otherwise.
PROFILE_APPS = ("v1", "v2")
# Requests profiled per app and scenario (and with --quick).
PROFILE_REQUESTS = 2000
QUICK_PROFILE_REQUESTS = 500


@dataclass(frozen=True)
class ProfileSettings:
    apps: tuple[str, ...] = PROFILE_APPS
    requests: int = PROFILE_REQUESTS
    dataset_size: int = 10_000
    pin: bool = True
    results_dir: Path = DEFAULT_RESULTS_DIR
