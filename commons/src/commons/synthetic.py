"""In-memory posts for the synthetic endpoint: serialisation cost without a database."""

from datetime import UTC, datetime, timedelta

from commons.models import Post

SYNTHETIC_CONTENT = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 4


def build_synthetic_posts(count: int) -> list[Post]:
    """Transient ORM objects (never added to a session), half published, half scheduled."""
    now = datetime.now(UTC)
    return [
        Post(
            id=number,
            created_at=now,
            updated_at=now,
            # Alternate past and future so both branches of is_published are exercised.
            published_at=now + timedelta(hours=number if number % 2 == 0 else -number),
            title=f"Synthetic post {number}",
            content=SYNTHETIC_CONTENT,
            is_deleted=False,
        )
        for number in range(1, count + 1)
    ]
