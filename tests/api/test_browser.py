"""/docs renders Swagger UI's operation list in a real browser with the network off.

Chromium comes from Debian's packages (.ci/run installs it). A proxy on a closed port stands
in for "no internet": every request that is not to the app on 127.0.0.1 fails, so a page that
needs a CDN renders nothing.
"""

import re
import shutil
import subprocess

import pytest

from commons.ladder import LADDER_PREFIX, RUNG_NAMES
from tests.app_processes import RunningApp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
OPERATIONS = (
    {"/posts", "/posts_synthetic", "/posts/{post_id}", "/health"}
    | {f"{LADDER_PREFIX}/{rung}" for rung in RUNG_NAMES}
    | {"/posts_bulk", "/payloads/flat", "/payloads/nested", "/payloads/validate"}
    | {"/posts_related/eager", "/posts_related/lazy", "/statements"}
    | {
        "/async/posts",
        "/async/posts/{post_id}",
        "/async/posts_synthetic",
        "/async/posts_related/eager",
    }
)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium; .ci/run does)"
)


def rendered_dom(url: str, profile_dir: str) -> str:
    """The page's DOM after its scripts ran, as headless Chromium saw it offline."""
    result = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile_dir}",
            "--proxy-server=http://127.0.0.1:9",
            "--virtual-time-budget=15000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_docs_render_the_operation_list_offline(app: RunningApp, tmp_path) -> None:
    dom = rendered_dom(f"{app.base_url}/docs", str(tmp_path))
    paths = set(re.findall(r'class="opblock-summary-path" data-path="([^"]+)"', dom))
    assert paths == OPERATIONS, paths


def test_redoc_renders_offline(app: RunningApp, tmp_path) -> None:
    dom = rendered_dom(f"{app.base_url}/redoc", str(tmp_path))
    assert "/posts_synthetic" in dom and "Pydantic v" in dom
