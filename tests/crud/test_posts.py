"""CRUD behaviour of commons against a real PostgreSQL."""

from datetime import UTC, datetime, timedelta, timezone

from sqlalchemy import select
from sqlalchemy.orm import Session

from commons import crud
from commons.models import Post
from tests.factories import PostData


def create_posts_published_at(session: Session, *moments: datetime) -> list[Post]:
    return [
        crud.create_post(session=session, post_in=PostData(title=f"post {index}", published_at=at))
        for index, at in enumerate(moments)
    ]


def test_create_post_returns_row_with_server_timestamps(session: Session) -> None:
    post = crud.create_post(session=session, post_in=PostData(title="Hello", content="World"))
    assert post.id > 0
    assert post.title == "Hello" and post.content == "World"
    assert post.created_at.tzinfo is not None and post.updated_at.tzinfo is not None
    assert post.is_deleted is False


def test_create_post_naive_datetime_means_utc(session: Session) -> None:
    naive = datetime(2024, 5, 1, 8, 30)
    post = crud.create_post(session=session, post_in=PostData(published_at=naive))
    session.expire_all()
    stored = session.get(Post, post.id)
    assert stored is not None
    assert stored.published_at == datetime(2024, 5, 1, 8, 30, tzinfo=UTC)


def test_create_post_offset_aware_datetime_is_the_same_instant(session: Session) -> None:
    plus_five = timezone(timedelta(hours=5))
    post = crud.create_post(
        session=session,
        post_in=PostData(published_at=datetime(2024, 5, 1, 13, 30, tzinfo=plus_five)),
    )
    session.expire_all()
    stored = session.get(Post, post.id)
    assert stored is not None
    assert stored.published_at == datetime(2024, 5, 1, 8, 30, tzinfo=UTC)
    assert stored.published_at.utcoffset() == timedelta(0)


def test_list_posts_orders_by_published_at_then_id(session: Session) -> None:
    same_moment = datetime(2024, 3, 1, tzinfo=UTC)
    late, early, tie_a, tie_b = create_posts_published_at(
        session,
        datetime(2025, 1, 1, tzinfo=UTC),
        datetime(2023, 1, 1, tzinfo=UTC),
        same_moment,
        same_moment,
    )
    ascending = crud.list_posts(session=session, limit=10, offset=0)
    assert [post.id for post in ascending] == [early.id, tie_a.id, tie_b.id, late.id]
    descending = crud.list_posts(session=session, limit=10, offset=0, newest_first=True)
    assert [post.id for post in descending] == [late.id, tie_b.id, tie_a.id, early.id]


def test_list_posts_paginates_without_overlap(session: Session) -> None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    created = create_posts_published_at(session, *(start + timedelta(hours=h) for h in range(7)))
    pages = [crud.list_posts(session=session, limit=3, offset=offset) for offset in (0, 3, 6, 9)]
    assert [len(page) for page in pages] == [3, 3, 1, 0]
    assert [post.id for page in pages for post in page] == [post.id for post in created]


def test_get_post_returns_none_for_missing_and_out_of_range_ids(session: Session) -> None:
    post = crud.create_post(session=session, post_in=PostData())
    assert crud.get_post(session=session, post_id=post.id) is post
    assert crud.get_post(session=session, post_id=post.id + 1000) is None
    assert crud.get_post(session=session, post_id=2**31) is None
    assert crud.get_post(session=session, post_id=-(2**63)) is None


def test_update_post_replaces_fields_and_bumps_updated_at(session: Session) -> None:
    post = crud.create_post(session=session, post_in=PostData(title="before"))
    first_updated_at = post.updated_at
    new_moment = datetime(2030, 1, 1, tzinfo=UTC)
    updated = crud.update_post(
        session=session, post_id=post.id, post_in=PostData(title="after", published_at=new_moment)
    )
    assert updated is not None and updated.title == "after"
    assert updated.published_at == new_moment
    assert updated.updated_at > first_updated_at


def test_update_post_bumps_updated_at_even_without_changes(session: Session) -> None:
    post = crud.create_post(session=session, post_in=PostData())
    first_updated_at = post.updated_at
    updated = crud.update_post(session=session, post_id=post.id, post_in=PostData())
    assert updated is not None and updated.updated_at > first_updated_at


def test_delete_post_is_soft(session: Session) -> None:
    kept, deleted = create_posts_published_at(
        session, datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 2, tzinfo=UTC)
    )
    assert crud.delete_post(session=session, post_id=deleted.id) is True
    assert crud.get_post(session=session, post_id=deleted.id) is None
    assert [post.id for post in crud.list_posts(session=session, limit=10, offset=0)] == [kept.id]
    row = session.scalars(select(Post).where(Post.id == deleted.id)).one()
    assert row.is_deleted is True


def test_update_and_delete_leave_a_deleted_post_alone(session: Session) -> None:
    post = crud.create_post(session=session, post_in=PostData(title="kept"))
    assert crud.delete_post(session=session, post_id=post.id) is True
    assert crud.delete_post(session=session, post_id=post.id) is False
    assert crud.update_post(session=session, post_id=post.id, post_in=PostData(title="x")) is None
    session.expire_all()
    row = session.scalars(select(Post).where(Post.id == post.id)).one()
    assert (row.title, row.is_deleted) == ("kept", True)


def test_update_and_delete_of_missing_or_out_of_range_ids_change_nothing(session: Session) -> None:
    for post_id in (1, 2**31, -(2**63)):
        assert crud.update_post(session=session, post_id=post_id, post_in=PostData()) is None
        assert crud.delete_post(session=session, post_id=post_id) is False
