"""Locust users, one file per mode (locust loads them by path)."""
