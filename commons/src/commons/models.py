"""SQLAlchemy 2 models shared by both apps."""

from datetime import datetime

from sqlalchemy import DateTime, Index, Text, false, func, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Post(Base):
    __tablename__ = "posts"
    # RETURNING fetches the server-side timestamps in the same round trip as INSERT/UPDATE.
    __mapper_args__ = {"eager_defaults": True}

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
    published_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    title: Mapped[str] = mapped_column(Text)
    content: Mapped[str] = mapped_column(Text)
    is_deleted: Mapped[bool] = mapped_column(default=False, server_default=false())

    __table_args__ = (
        # Serves the list endpoint: visible posts ordered by (published_at, id).
        Index(
            "ix_posts_visible_by_published_at",
            "published_at",
            "id",
            postgresql_where=text("NOT is_deleted"),
        ),
    )
