"""Shared, Pydantic-free parts of the Pydantic v1 vs v2 lab."""
