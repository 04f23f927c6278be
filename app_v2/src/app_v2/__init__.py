"""The lab's CRUD app on Pydantic 2."""
