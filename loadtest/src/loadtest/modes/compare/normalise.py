"""What a migration may legitimately change in an answer, undone before two arms' answers are
compared field by field (each switchable: [verify] normalise in the file), and the comparison
itself."""

import re
from datetime import UTC, datetime
from typing import Any

# name -> what it forgives, in the docs' and the errors' words
NORMALISATIONS = {
    "timestamps": "ISO 8601 timestamps are compared as instants: 2024-06-01T12:00:00Z equals "
    "2024-06-01T12:00:00+00:00 (Pydantic 1 writes the one, Pydantic 2 the other)",
    "validation_details": "in a 422 answer's detail items, the keys Pydantic 2 added (input, "
    "ctx, url) are left out",
}
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
ADDED_DETAIL_KEYS = ("input", "ctx", "url")
SHOWN_DIFFERENCES = 3  # in the one-line error; results.json keeps them all
MAX_SHOWN = 60  # characters of a value in a difference


def normalise(value: Any, chosen: tuple[str, ...], status: int) -> Any:
    """The answer with what `chosen` forgives undone."""
    if "validation_details" in chosen and status == 422 and isinstance(value, dict):
        detail = value.get("detail")
        if isinstance(detail, list):
            value = {
                **value,
                "detail": [
                    {k: v for k, v in item.items() if k not in ADDED_DETAIL_KEYS}
                    if isinstance(item, dict)
                    else item
                    for item in detail
                ],
            }
    if "timestamps" in chosen:
        value = instants(value)
    return value


def instants(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: instants(item) for key, item in value.items()}
    if isinstance(value, list):
        return [instants(item) for item in value]
    if isinstance(value, str) and TIMESTAMP.match(value):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        # The same instant in any offset reads the same; a naive time stays as it is.
        return (moment.astimezone(UTC) if moment.tzinfo else moment).isoformat()
    return value


def differences(
    reference: Any, other: Any, vary: tuple[str, ...] = (), path: str = ""
) -> list[str]:
    """Where `other` differs from `reference`, one line each ("posts[3].title: 'a' vs 'b'");
    a field named in `vary` (a dotted path without indices, or a bare key anywhere) need only
    hold the same kind of value."""
    if varies(path, vary):
        if json_kind(reference) != json_kind(other):
            return [f"{path}: {json_kind(reference)} vs {json_kind(other)}"]
        return []
    if isinstance(reference, dict) and isinstance(other, dict):
        found = []
        for key in [*reference, *(key for key in other if key not in reference)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in other:
                found.append(f"{where}: missing")
            elif key not in reference:
                found.append(f"{where}: not in the baseline's answer")
            else:
                found += differences(reference[key], other[key], vary, where)
        return found
    if isinstance(reference, list) and isinstance(other, list):
        if len(reference) != len(other):
            return [f"{path or 'the answer'}: {len(reference)} items vs {len(other)}"]
        found = []
        for index, (left, right) in enumerate(zip(reference, other, strict=True)):
            found += differences(left, right, vary, f"{path}[{index}]")
        return found
    if json_kind(reference) != json_kind(other) or reference != other:
        return [f"{path or 'the answer'}: {shown(reference)} vs {shown(other)}"]
    return []


def varies(path: str, vary: tuple[str, ...]) -> bool:
    if not path or not vary:
        return False
    plain = re.sub(r"\[\d+\]", "", path)
    last = plain.rsplit(".", 1)[-1]
    return any(entry == plain or ("." not in entry and entry == last) for entry in vary)


def json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def has_field(value: Any, dotted: str) -> bool:
    """Whether the dotted path is in the answer: through a list, in every item (an empty list
    holds it: nothing there lacks it)."""
    key, _, rest = dotted.partition(".")
    if isinstance(value, list):
        return all(has_field(item, dotted) for item in value)
    if not isinstance(value, dict) or key not in value:
        return False
    return not rest or has_field(value[key], rest)


def field_at(value: Any, dotted: str) -> list[Any]:
    """Every value at a dotted path (a list on the way: each of its items); an empty list where
    the path is missing."""
    found = [value]
    for key in dotted.split("."):
        step: list[Any] = []
        for item in found:
            items = item if isinstance(item, list) else [item]
            for entry in items:
                if not isinstance(entry, dict) or key not in entry:
                    return []
                step.append(entry[key])
        found = step
    return found
