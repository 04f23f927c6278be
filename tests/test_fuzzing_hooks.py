"""The schemathesis hook accepts exactly the pinned classes of input, and nothing else."""

from types import SimpleNamespace

import pytest

from tests.fuzzing.hooks import (
    has_pinned_input,
    has_unrepresentable_instant,
    is_lenient_integer,
)

VALID = {"title": "t", "content": "c", "published_at": "2024-01-01T00:00:00Z"}


def case(body=None, path_parameters=None, query=None) -> SimpleNamespace:
    return SimpleNamespace(body=body, path_parameters=path_parameters, query=query)


@pytest.mark.parametrize("value", ["2_0", " 12 ", "10.0", "1e1"])
def test_lenient_integers_are_recognised(value: str) -> None:
    assert is_lenient_integer(value)


@pytest.mark.parametrize("value", ["12", "-3", "abc", "1.5", "", None, 12, "１２", "\u0661"])
def test_plain_or_invalid_integers_are_not_lenient(value: object) -> None:
    assert not is_lenient_integer(value)


@pytest.mark.parametrize(
    "pinned",
    [
        case(body={**VALID, "published_at": 0}),
        case(body={**VALID, "published_at": False}),
        case(body={**VALID, "published_at": "2024-01-01"}),
        case(body={**VALID, "published_at": "1700000000"}),
        case(path_parameters={"post_id": "2_0_2_9_0"}),
        case(query={"per_page": " 10"}),
        case(body={**VALID, "published_at": 5}, path_parameters={"post_id": "1_2"}),
        case(query={"items": "10.0"}),
        case(query={"items": "5", "comments": " 3"}),
        case(body={"posts": [VALID, {**VALID, "published_at": True}]}),
    ],
)
def test_pinned_inputs_are_recognised(pinned: SimpleNamespace) -> None:
    assert has_pinned_input(pinned)


@pytest.mark.parametrize(
    "other",
    [
        case(body=VALID),
        case(body={**VALID, "title": "T" * 301}),
        case(body={**VALID, "published_at": "yesterday"}),
        case(body={**VALID, "extra": 1}),
        case(body={**VALID, "title": 123}),
        case(query={"per_page": "１０"}),
        case(body=[1, 2]),
        case(path_parameters={"post_id": "12"}, query={"per_page": "-1"}),
        case(body={"posts": [VALID, VALID]}),
        case(query={"items": "٣"}),
    ],
)
def test_other_inputs_are_not_pinned(other: SimpleNamespace) -> None:
    assert not has_pinned_input(other)


@pytest.mark.parametrize(
    "masked",
    [
        case(body={**VALID, "published_at": 0, "title": "a\x00b"}),
        case(body={**VALID, "published_at": 0, "content": "C" * 100_001}),
        case(body={**VALID, "published_at": 0, "title": 7}),
        case(body={"posts": [{**VALID, "published_at": 0}, {**VALID, "title": "a\x00b"}]}),
        case(body={"posts": [{**VALID, "published_at": 0}, "not a post"]}),
        case(body={"posts": [{**VALID, "published_at": 0}, {"title": "t", "content": "c"}]}),
        case(body={"posts": [{**VALID, "published_at": 0}] * 1001}),
        case(body={"title": "t", "published_at": 0}),
        case(query={"items": "5_001"}),
        case(query={"per_page": "1_001"}),
        case(query={"comments": " 11"}),
        case(path_parameters={"post_id": "1_2"}, query={"per_page": "-1"}),
    ],
)
def test_a_pinned_input_does_not_hide_another_violation(masked: SimpleNamespace) -> None:
    assert not has_pinned_input(masked)


@pytest.mark.parametrize(
    ("published_at", "refused"),
    [
        ("0001-01-01T00:00:00+00:01", True),  # before year 1 in UTC
        ("9999-12-31T23:59:59-00:01", True),  # after year 9999 in UTC
        ("0001-01-01T00:00:00+00:00", False),
        ("2024-01-01T12:00:00Z", False),
        ("yesterday", False),
        (0, False),
    ],
)
def test_instants_outside_utc_are_recognised(published_at: object, refused: bool) -> None:
    assert has_unrepresentable_instant(case(body={**VALID, "published_at": published_at})) is (
        refused
    )
    bulk = case(body={"posts": [VALID, {**VALID, "published_at": published_at}]})
    assert has_unrepresentable_instant(bulk) is refused
