"""Where things live in the repository."""

from pathlib import Path

REPOSITORY_ROOT = Path(__file__).resolve().parents[4]
LOADTEST_DIR = REPOSITORY_ROOT / "loadtest"
DEFAULT_RESULTS_DIR = REPOSITORY_ROOT / "results"
