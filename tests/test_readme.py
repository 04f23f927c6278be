"""README.md's v1 -> v2 diff of schemas.py is the real one."""

import difflib
import re
from pathlib import Path

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
V1, V2 = "app_v1/src/app_v1/schemas.py", "app_v2/src/app_v2/schemas.py"


def test_readme_shows_the_real_schemas_diff() -> None:
    readme = (REPOSITORY_ROOT / "README.md").read_text()
    [shown] = re.findall(r"```diff\n(.*?)\n```", readme, flags=re.DOTALL)
    v1 = (REPOSITORY_ROOT / V1).read_text().splitlines()
    v2 = (REPOSITORY_ROOT / V2).read_text().splitlines()
    assert shown == "\n".join(difflib.unified_diff(v1, v2, V1, V2, lineterm=""))
