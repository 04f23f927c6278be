"""What a migration may change in an answer (a timestamp's spelling, Pydantic 2's extra keys in
a 422), undone before two arms' answers are compared; the comparison's one line per difference;
the fields a file may let vary."""

from typing import Any

import pytest

from loadtest.modes.compare.normalise import (
    NORMALISATIONS,
    differences,
    field_at,
    has_field,
    normalise,
)

ALL = tuple(NORMALISATIONS)
ZULU = {"post": {"published_at": "2024-06-01T12:00:00Z"}}
OFFSET = {"post": {"published_at": "2024-06-01T12:00:00+00:00"}}
PYDANTIC_1_422 = {
    "detail": [
        {"loc": ["body", "title"], "msg": "field required", "type": "value_error.missing"},
    ]
}
PYDANTIC_2_422 = {
    "detail": [
        {
            "loc": ["body", "title"],
            "msg": "field required",
            "type": "value_error.missing",
            "input": {"content": "x"},
            "ctx": {"error": "missing"},
            "url": "https://errors.pydantic.dev/2.14/v/missing",
        },
    ]
}


def compared(left: Any, right: Any, chosen: tuple[str, ...], status: int = 200) -> list[str]:
    return differences(normalise(left, chosen, status), normalise(right, chosen, status))


def test_z_and_utc_offset_are_one_instant_under_timestamps() -> None:
    assert compared(ZULU, OFFSET, ("timestamps",)) == []
    assert compared(ZULU, OFFSET, ()) == [
        "post.published_at: '2024-06-01T12:00:00Z' vs '2024-06-01T12:00:00+00:00'"
    ]


def test_one_instant_in_two_offsets_is_one_instant_under_timestamps() -> None:
    paris, utc = {"at": "2024-01-01T01:00:00+01:00"}, {"at": "2024-01-01T00:00:00Z"}
    assert normalise(paris, ("timestamps",), 200) == normalise(utc, ("timestamps",), 200)
    assert normalise(paris, (), 200) != normalise(utc, (), 200)


def test_timestamps_in_lists_and_with_fractions() -> None:
    left = {"posts": [{"at": "2024-06-01T12:00:00.000Z"}, {"at": "2024-06-01 12:00:00Z"}]}
    right = {"posts": [{"at": "2024-06-01T12:00:00+00:00"}] * 2}
    assert compared(left, right, ("timestamps",)) == []


def test_different_instants_still_differ_under_timestamps() -> None:
    later = {"post": {"published_at": "2024-06-01T12:00:01+00:00"}}
    assert compared(ZULU, later, ALL) == [
        "post.published_at: '2024-06-01T12:00:00+00:00' vs '2024-06-01T12:00:01+00:00'"
    ]


def test_a_string_that_only_looks_like_a_date_is_left_alone() -> None:
    assert normalise({"title": "2024-06-01 was a Saturday"}, ALL, 200) == {
        "title": "2024-06-01 was a Saturday"
    }


def test_pydantic_2s_extra_422_keys_go_under_validation_details_only_in_a_422() -> None:
    assert compared(PYDANTIC_1_422, PYDANTIC_2_422, ("validation_details",), 422) == []
    assert compared(PYDANTIC_1_422, PYDANTIC_2_422, ("validation_details",), 200) != []
    assert compared(PYDANTIC_1_422, PYDANTIC_2_422, ("timestamps",), 422) == [
        "detail[0].input: not in the baseline's answer",
        "detail[0].ctx: not in the baseline's answer",
        "detail[0].url: not in the baseline's answer",
    ]


def test_validation_details_keeps_what_both_versions_say() -> None:
    other_message = {"detail": [{**PYDANTIC_2_422["detail"][0], "msg": "Field required"}]}
    assert compared(PYDANTIC_1_422, other_message, ALL, 422) == [
        "detail[0].msg: 'field required' vs 'Field required'"
    ]


def test_normalising_leaves_the_answer_it_was_given_unchanged() -> None:
    answer = {"detail": [dict(PYDANTIC_2_422["detail"][0])], "at": "2024-06-01T12:00:00Z"}
    before = repr(answer)
    normalise(answer, ALL, 422)
    assert repr(answer) == before


def test_a_difference_names_its_path() -> None:
    reference = {"posts": [{"title": "a"}, {"title": "a"}]}
    other = {"posts": [{"title": "a"}, {"title": "b"}]}
    assert differences(reference, other) == ["posts[1].title: 'a' vs 'b'"]


def test_missing_and_extra_keys() -> None:
    assert differences({"id": 1, "title": "a"}, {"id": 1, "slug": "a"}) == [
        "title: missing",
        "slug: not in the baseline's answer",
    ]


def test_lists_of_different_lengths() -> None:
    assert differences({"posts": [1, 2, 3]}, {"posts": [1, 2]}) == ["posts: 3 items vs 2"]
    assert differences([1], []) == ["the answer: 1 items vs 0"]


@pytest.mark.parametrize(
    ("reference", "other", "difference"),
    [
        (1, "1", "n: 1 vs '1'"),
        (1, True, "n: 1 vs True"),
        (None, 0, "n: None vs 0"),
        ({"a": 1}, [1], "n: {'a': 1} vs [1]"),
    ],
)
def test_a_change_of_kind_is_a_difference(reference: Any, other: Any, difference: str) -> None:
    assert differences({"n": reference}, {"n": other}) == [difference]


def test_equal_numbers_of_either_spelling_agree() -> None:
    assert differences({"price": 1}, {"price": 1.0}) == []


def test_a_whole_answer_that_differs() -> None:
    assert differences("ok", "OK") == ["the answer: 'ok' vs 'OK'"]


def test_a_long_value_is_shortened() -> None:
    [line] = differences({"t": "x" * 200}, {"t": "y"})
    assert line.startswith("t: 'xxxx") and "… vs 'y'" in line
    assert len(line) < 100


def test_vary_by_a_bare_key_at_any_depth() -> None:
    reference = {"id": 1, "posts": [{"id": 10, "author": {"id": 5}}]}
    other = {"id": 2, "posts": [{"id": 11, "author": {"id": 6}}]}
    assert differences(reference, other, ("id",)) == []
    assert len(differences(reference, other)) == 3


def test_vary_by_a_dotted_path_only_there() -> None:
    reference = {"id": 1, "posts": [{"id": 10}, {"id": 12}]}
    other = {"id": 2, "posts": [{"id": 11}, {"id": 13}]}
    assert differences(reference, other, ("posts.id",)) == ["id: 1 vs 2"]


def test_a_varying_field_must_keep_its_kind() -> None:
    assert differences({"posts": [{"id": 1}]}, {"posts": [{"id": "1"}]}, ("posts.id",)) == [
        "posts[0].id: a number vs a string"
    ]
    assert differences({"updated_at": None}, {"updated_at": "2024-06-01"}, ("updated_at",)) == [
        "updated_at: null vs a string"
    ]


def test_field_at_finds_nested_fields_through_lists() -> None:
    answer = {"posts": [{"author": {"name": "a"}}, {"author": {"name": "b"}}], "count": 0}
    assert field_at(answer, "posts.author.name") == ["a", "b"]
    assert field_at(answer, "count") == [0]  # a falsy value is still there
    assert field_at({"posts": []}, "posts") == [[]]


def test_field_at_is_empty_where_the_path_is_missing() -> None:
    assert field_at({"posts": [{"title": "a"}, {}]}, "posts.title") == []
    assert field_at({"post": {"title": "a"}}, "post.slug") == []
    assert field_at({"post": "a"}, "post.title") == []
    assert field_at("text", "title") == []


def test_a_field_through_an_empty_list_is_there() -> None:
    """Nothing in an empty list lacks the field; one item without it does."""
    assert has_field({"items": []}, "items.id")
    assert has_field({"items": [{"id": 1}, {"id": 2}]}, "items.id")
    assert not has_field({"items": [{"id": 1}, {"name": "x"}]}, "items.id")
    assert not has_field({"other": []}, "items")
