"""What the probes that wrap an app share: the app named by an import string."""

import importlib
from typing import Any


def load(target: str) -> Any:
    """The object `module:attribute` names (`app` where no attribute is given)."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute or "app")
