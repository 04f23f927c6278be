"""A report page rendered in a real browser (Debian's Chromium, which .ci/run installs) with the
network off, and read back as pixels: the charts' tests look for each arm's colour."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from loadtest.lab.arms import ARMS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)"
)


def screenshot_pixels(
    page: Path, folder: Path, width: int = 1300, height: int = 4000
) -> np.ndarray:
    """The page as Chromium draws it offline (every request goes to a closed proxy): RGB."""
    assert CHROMIUM is not None
    screenshot = folder / "page.png"
    result = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={folder / 'profile'}",
            "--proxy-server=http://127.0.0.1:9",
            f"--window-size={width},{height}",
            f"--screenshot={screenshot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return image.imread(screenshot)[:, :, :3]


def hex_colour(text: str) -> np.ndarray:
    return np.array([int(text[i : i + 2], 16) for i in (1, 3, 5)]) / 255


def pixels_of_arm(pixels: np.ndarray, arm: str) -> int:
    """How many pixels have exactly the arm's colour (within rounding)."""
    return int(np.all(np.abs(pixels - hex_colour(ARMS[arm].colour)) < 0.02, axis=-1).sum())
