"""PUTs and DELETEs racing on the same posts: every 2xx is exactly one change of the row, and a
PUT or DELETE that comes after another request deleted the post is a 404 (commons/crud.py).
The row's history is the one an audit trigger, created here in the arm's test database, keeps."""

import random
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import psycopg
import pytest

from tests import loopback
from tests.app_processes import RunningApp
from tests.factories import post_body

POSTS = 4
PUTS_PER_POST = 8
DELETES_PER_POST = 8
AUDIT_TRIGGER = """
CREATE TABLE posts_audit (
    change_id bigserial PRIMARY KEY,
    post_id integer NOT NULL,
    was_deleted boolean NOT NULL,
    is_deleted boolean NOT NULL,
    title text NOT NULL
);
CREATE FUNCTION log_post_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO posts_audit (post_id, was_deleted, is_deleted, title)
    VALUES (OLD.id, OLD.is_deleted, NEW.is_deleted, NEW.title);
    RETURN NEW;
END $$;
CREATE TRIGGER posts_audit AFTER UPDATE ON posts FOR EACH ROW EXECUTE FUNCTION log_post_update();
"""
DROP_AUDIT_TRIGGER = """
DROP TRIGGER IF EXISTS posts_audit ON posts;
DROP FUNCTION IF EXISTS log_post_update();
DROP TABLE IF EXISTS posts_audit;
"""


@pytest.fixture
def audited(app: RunningApp) -> Iterator[str]:
    """Every UPDATE of a row of posts, logged by the database itself; removed afterwards."""
    with psycopg.connect(app.database_url, autocommit=True) as connection:
        connection.execute(DROP_AUDIT_TRIGGER)
        connection.execute(AUDIT_TRIGGER)
    yield app.database_url
    with psycopg.connect(app.database_url, autocommit=True) as connection:
        connection.execute(DROP_AUDIT_TRIGGER)


def logged_changes(database_url: str) -> list[tuple[int, bool, bool, str]]:
    with psycopg.connect(database_url) as connection:
        return connection.execute(
            "SELECT post_id, was_deleted, is_deleted, title FROM posts_audit ORDER BY change_id"
        ).fetchall()


def test_racing_puts_and_deletes_answer_what_happened(
    app: RunningApp, client: httpx.Client, audited: str
) -> None:
    ids = [client.post("/posts", json=post_body(title="new")).json()["id"] for _ in range(POSTS)]
    puts = [("PUT", post_id, f"put {post_id} {n}") for post_id in ids for n in range(PUTS_PER_POST)]
    deletes = [("DELETE", post_id, "") for post_id in ids for _ in range(DELETES_PER_POST)]
    requests = puts + deletes
    random.Random(20).shuffle(requests)
    start = threading.Barrier(len(requests))
    limits = httpx.Limits(max_connections=len(requests))

    with loopback.client(base_url=app.base_url, timeout=30, limits=limits) as racing:

        def send(method: str, post_id: int, title: str) -> httpx.Response:
            body = post_body(title=title) if method == "PUT" else None
            start.wait()  # all at once
            return racing.request(method, f"/posts/{post_id}", json=body)

        with ThreadPoolExecutor(len(requests)) as pool:
            answers = list(pool.map(lambda request: send(*request), requests))

    changes = logged_changes(audited)
    for post_id in ids:
        answered = [
            (method, title, response)
            for (method, answered_id, title), response in zip(requests, answers, strict=True)
            if answered_id == post_id
        ]
        statuses = Counter((method, response.status_code) for method, _, response in answered)
        assert set(statuses) <= {("PUT", 200), ("PUT", 404), ("DELETE", 204), ("DELETE", 404)}
        history = [change for change in changes if change[0] == post_id]
        assert not [change for change in history if change[1]], "a deleted post was written to"
        assert statuses[("DELETE", 204)] == 1, statuses
        assert [change for change in history if change[2]] == [history[-1]], "deleted once, last"
        updated_titles = sorted(title for _, _, is_deleted, title in history if not is_deleted)
        acknowledged = sorted(
            title
            for method, title, response in answered
            if method == "PUT" and response.status_code == 200
        )
        assert updated_titles == acknowledged, "every 200 is one change, and each change a 200"
        for _, title, response in answered:
            if response.status_code == 200:
                assert response.json()["title"] == title
            elif response.status_code == 404:
                assert response.json() == {"detail": "Post not found"}
        assert client.get(f"/posts/{post_id}").status_code == 404
