"""The up mode's settings."""

from dataclasses import dataclass, field

from loadtest.lab.arms import DEFAULT_ARMS
from loadtest.load.settings import default_ports

LOCUST_WEB_PORT = 8089
# The web UI's user class for each scenario (locustfile.py; a test holds the two together). The
# runner names one on locust's command line instead of importing the locustfile: it never
# shares locust's gevent monkey-patching.
USER_CLASSES = {
    "read": "ReadUser",
    "synthetic": "SyntheticUser",
    "write": "WriteUser",
    "read-eager": "RelatedEagerUser",
    "read-lazy": "RelatedLazyUser",
    "async-read": "AsyncReadUser",
    "async-synthetic": "AsyncSyntheticUser",
    "async-write": "AsyncWriteUser",
}


@dataclass(frozen=True)
class UpSettings:
    apps: tuple[str, ...] = DEFAULT_ARMS
    users: int = 10
    dataset_size: int = 10_000
    workers: int = 1
    ports: dict[str, int] = field(default_factory=default_ports)
    ui_port: int = LOCUST_WEB_PORT
    scenario: str = "read"  # the web UI's one user class: USER_CLASSES[scenario]
