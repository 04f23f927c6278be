"""The related rows of the dataset: each post's comments (one-to-many) and tags (many-to-many),
the same for a given post id on every run, every machine and every arm.

Drawn per post from a hash of its id and a seed, so a post has the same
comments and tags whatever the dataset's size, and a test can give the posts it created theirs.
0 to 20 comments a post (10 on average), of 4 to 24 words, and 1 to 5 of TAG_COUNT tags, as a
blog's posts have them. Written by the server itself, one INSERT ... SELECT over
generate_series a table: nothing drawn in Python or sent over the connection. The 100,000
comments and 30,000 tag links of the default dataset take about 3 s on a 2-vCPU VM (the
foreign-key checks about 0.8 s of it), as long as drawing them in Python and sending them by
COPY did, so the benchmark writes them only when a scenario reads them."""

from datetime import UTC, datetime

import psycopg

# Where the routes that read them live (commons/related_routes.py).
RELATED_PREFIX = "/posts_related"
SEED = "pydantic-lab"  # any constant: it only has to stay the same
MAX_COMMENTS = 20
MAX_TAGS = 5
TAG_COUNT = 40
COMMENTS_FROM = datetime(2020, 1, 1, tzinfo=UTC)  # a post's comments: hours after, 7 min apart
COMMENT_WORDS = (
    "thanks for the clear write-up this saved me an afternoon of reading the release notes "
    "but I measured something else on my own service with nested models and a slow database"
).split()


def post_hash(k: int | str) -> str:
    """SQL for a hash of the post's id and k, in 0 .. 2**32 - 1: the first 32 bits of an MD5,
    the same on every PostgreSQL (arithmetic hashes left visible patterns in small moduli)."""
    return f"('x' || substr(md5('{SEED}:' || posts.id || ':' || ({k})), 1, 8))::bit(32)::bigint"


WORD_COUNT = len(COMMENT_WORDS)
COMMENTS_OF_EVERY_POST = f"""
WITH drawn AS (
    SELECT posts.id AS post_id, k, {post_hash("k")} AS h
    FROM posts, generate_series(1, mod({post_hash(0)}, {MAX_COMMENTS + 1})) AS k
), sized AS (
    SELECT post_id, k, h, 4 + mod(h, 21) AS words FROM drawn
), sentences AS (
    SELECT post_id, k,
           array_to_string(
               (%(words)s::text[])[1 + mod(h / 32, {WORD_COUNT} - words + 1) :
                                   mod(h / 32, {WORD_COUNT} - words + 1) + words],
               ' ') AS sentence
    FROM sized
)
INSERT INTO comments (post_id, created_at, text)
SELECT post_id,
       %(start)s + post_id * interval '1 hour' + (k - 1) * interval '7 minutes',
       upper(left(sentence, 1)) || substr(sentence, 2) || '.'
FROM sentences
ORDER BY post_id, k
"""
# A post's tags: from a first one, every 11th (distinct for up to 5 of 40).
TAGS_OF_EVERY_POST = f"""
INSERT INTO post_tags (post_id, tag_id)
SELECT posts.id, 1 + mod({post_hash(-1)} + j * 11, {TAG_COUNT})
FROM posts, generate_series(1, 1 + mod({post_hash(-2)}, {MAX_TAGS})) AS j
"""


def tag_name(tag_id: int) -> str:
    return f"tag-{tag_id:02d}"


def load_related_rows(connection: psycopg.Connection) -> None:
    """Replace every comment and tag with those of the posts in the table, in the connection's
    transaction: comment ids 1, 2, ... in post order, tag ids 1..TAG_COUNT."""
    connection.execute("TRUNCATE comments, post_tags, tags RESTART IDENTITY")
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO tags (id, name) VALUES (%s, %s)",
            [(tag_id, tag_name(tag_id)) for tag_id in range(1, TAG_COUNT + 1)],
        )
    connection.execute("SELECT setval('tags_id_seq', %s)", (TAG_COUNT,))
    connection.execute(COMMENTS_OF_EVERY_POST, {"words": COMMENT_WORDS, "start": COMMENTS_FROM})
    connection.execute(TAGS_OF_EVERY_POST)
