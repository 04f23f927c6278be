"""The up mode's settings."""

from dataclasses import dataclass, field

from loadtest.lab.arms import DEFAULT_ARMS
from loadtest.load.settings import default_ports

LOCUST_WEB_PORT = 8089


@dataclass(frozen=True)
class UpSettings:
    apps: tuple[str, ...] = DEFAULT_ARMS
    users: int = 10
    dataset_size: int = 10_000
    workers: int = 1
    ports: dict[str, int] = field(default_factory=default_ports)
    ui_port: int = LOCUST_WEB_PORT
