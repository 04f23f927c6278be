"""422 bodies that stay small and strict JSON, whatever the client sent.

Pydantic 2 echoes the offending input in every error (`input`, sometimes `ctx`): a 50 MB string
came back as a 157 MB body, and a JSON `NaN` came back as a bare `NaN`, which strict JSON
parsers reject. The field detail (`loc`, `msg`, `type`) is kept; echoed values are cut down.
"""

import math
from typing import Any

MAX_ERRORS = 50  # errors listed per 422; the rest are counted in one more entry
MAX_TEXT = 200  # characters of an echoed string
MAX_ITEMS = 10  # entries of an echoed list or object
MAX_DEPTH = 4  # levels of nesting echoed


def bounded(value: Any, depth: int = 0) -> Any:
    """A JSON-ready value no bigger than the limits, with no NaN or infinity left in it."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str):
        if len(value) <= MAX_TEXT:
            return value
        return f"{value[:MAX_TEXT]}… ({len(value):,} characters)"
    if isinstance(value, dict | list | tuple) and depth >= MAX_DEPTH:
        return f"… (nested {type(value).__name__})"
    if isinstance(value, dict):
        items = list(value.items())
        kept = {str(key)[:MAX_TEXT]: bounded(item, depth + 1) for key, item in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            kept["…"] = f"{len(items) - MAX_ITEMS:,} more keys"
        return kept
    if isinstance(value, list | tuple):
        kept_list = [bounded(item, depth + 1) for item in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            kept_list.append(f"… {len(value) - MAX_ITEMS:,} more items")
        return kept_list
    return value


def bounded_errors(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most MAX_ERRORS errors, each with its echoed input and context cut down."""
    kept = []
    for error in errors[:MAX_ERRORS]:
        entry = dict(error)
        entry["loc"] = [bounded(part, MAX_DEPTH - 1) for part in entry.get("loc", [])[:20]]
        for key in ("input", "ctx"):
            if key in entry:
                entry[key] = bounded(entry[key])
        kept.append(entry)
    if len(errors) > MAX_ERRORS:
        kept.append(
            {
                "loc": [],
                "msg": f"{len(errors) - MAX_ERRORS:,} more errors not listed",
                "type": "too_many_errors",
            }
        )
    return kept
