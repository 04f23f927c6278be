"""SQLAlchemy 2 models shared by both apps: posts, and their comments and tags (the related
rows, commons/related_routes.py)."""

from datetime import datetime

from sqlalchemy import Column, DateTime, ForeignKey, Index, Table, Text, false, func, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


# Many-to-many: a post's tags. Rows go with their post (ON DELETE CASCADE), as comments do.
post_tags = Table(
    "post_tags",
    Base.metadata,
    Column("post_id", ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True),
)


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
    # The default loader (lazy="select"): read by attribute, each fires one SELECT, which is
    # what the lazy related route measures; the eager one asks for selectinload.
    comments: Mapped[list["Comment"]] = relationship(
        order_by="Comment.id", back_populates="post", passive_deletes=True
    )
    tags: Mapped[list["Tag"]] = relationship(
        secondary=post_tags, order_by="Tag.id", passive_deletes=True
    )

    __table_args__ = (
        # Serves the list endpoint: visible posts ordered by (published_at, id).
        Index(
            "ix_posts_visible_by_published_at",
            "published_at",
            "id",
            postgresql_where=text("NOT is_deleted"),
        ),
    )


class Comment(Base):
    __tablename__ = "comments"

    id: Mapped[int] = mapped_column(primary_key=True)
    post_id: Mapped[int] = mapped_column(ForeignKey("posts.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    text: Mapped[str] = mapped_column(Text)
    post: Mapped[Post] = relationship(back_populates="comments")


class Tag(Base):
    __tablename__ = "tags"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
