"""The lab's CRUD app on Pydantic 1.10."""
