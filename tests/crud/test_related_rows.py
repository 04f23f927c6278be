"""The dataset's related rows (commons/related_rows.py): a post's comments and tags depend on
its id alone, so they are the same whatever else the table holds; and crud loads them eagerly
in a fixed number of statements."""

from typing import Any

from sqlalchemy import Engine, event, select, text
from sqlalchemy.orm import Session

from commons import crud
from commons.models import Comment
from commons.related_rows import MAX_COMMENTS, MAX_TAGS, TAG_COUNT, load_related_rows
from tests.factories import PostData


def related_rows(session: Session) -> dict[int, tuple[list[Any], list[int]]]:
    """Per post id: its comments (created_at, text) and its tag ids."""
    rows: dict[int, tuple[list[Any], list[int]]] = {}
    for post in crud.list_posts(session=session, limit=1000, offset=0, with_related=True):
        comments = [(comment.created_at, comment.text) for comment in post.comments]
        rows[post.id] = (comments, [tag.id for tag in post.tags])
    return rows


def load(session: Session) -> None:
    connection = session.connection().connection.driver_connection
    assert connection is not None
    load_related_rows(connection)  # type: ignore[arg-type]
    session.commit()
    session.expunge_all()


def test_a_posts_rows_depend_on_its_id_alone(session: Session) -> None:
    for number in range(30):
        crud.create_post(session=session, post_in=PostData(title=f"post {number}"))
    load(session)
    first = related_rows(session)
    for number in range(30):
        crud.create_post(session=session, post_in=PostData(title=f"more {number}"))
    load(session)
    second = related_rows(session)
    assert {post_id: second[post_id] for post_id in first} == first
    assert len(second) == 60
    counts = [len(comments) for comments, _ in second.values()]
    assert 0 == min(counts) and max(counts) <= MAX_COMMENTS and len(set(counts)) > 5
    assert all(
        1 <= len(tags) <= MAX_TAGS and len(set(tags)) == len(tags) for _, tags in second.values()
    )
    assert {tag for _, tags in second.values() for tag in tags} <= set(range(1, TAG_COUNT + 1))
    # Comment ids follow the posts' order.
    ids = session.scalars(select(Comment.post_id).order_by(Comment.id)).all()
    assert list(ids) == sorted(ids)
    assert session.execute(text("SELECT count(*) FROM tags")).scalar_one() == TAG_COUNT


def test_eager_loading_is_three_statements_and_lazy_two_a_post(
    session: Session, engine: Engine
) -> None:
    for number in range(20):
        crud.create_post(session=session, post_in=PostData(title=f"post {number}"))
    load(session)
    statements: list[str] = []

    def count(*arguments: Any) -> None:
        statements.append(arguments[2])

    event.listen(engine, "before_cursor_execute", count)
    try:
        for with_related in (True, False):
            session.expunge_all()
            before = len(statements)
            for post in crud.list_posts(
                session=session, limit=20, offset=0, with_related=with_related
            ):
                len(post.comments), len(post.tags)
            assert len(statements) - before == (3 if with_related else 41)
    finally:
        event.remove(engine, "before_cursor_execute", count)
