"""gunicorn's configuration for `./test.sh workers`
(`gunicorn -c python:commons.probes.gunicorn_config`), read by the master before it loads the
app (and so before `--preload` imports it).

- The worker: uvicorn's, from the `uvicorn-worker` package (gunicorn's own `uvicorn.workers` is
  deprecated), with the HTTP protocol named by LAB_WORKERS_HTTP: the lab's bounded protocol for
  the lab's own apps, uvicorn's default for the generated ones (as `./test.sh scale` serves them).
- `post_fork`: a preloaded app forgets, in each child, the database connections it opened in the
  master (workers.after_fork).
- LAB_WORKERS_GC_FREEZE=1: the `gc.freeze()` recipe for sharing a preloaded app's pages after
  fork: the collector off from the start (a collection before the fork would move objects and
  dirty their pages), every object alive at the fork moved into the permanent generation, which
  the collector never scans, and the collector on again in each child. Reference counts still
  write to the shared pages they live on.
"""

import gc
import os
import sys
from typing import Any

from uvicorn_worker import UvicornWorker

FREEZE = os.environ.get("LAB_WORKERS_GC_FREEZE") == "1"
if FREEZE:
    gc.disable()


class LabUvicornWorker(UvicornWorker):
    CONFIG_KWARGS = {
        **UvicornWorker.CONFIG_KWARGS,
        "http": os.environ.get("LAB_WORKERS_HTTP", "auto"),
    }


worker_class = "commons.probes.gunicorn_config.LabUvicornWorker"


def pre_fork(server: Any, worker: Any) -> None:
    if FREEZE:
        gc.freeze()


def post_fork(server: Any, worker: Any) -> None:
    probe = sys.modules.get("commons.probes.workers")
    if probe is not None:
        probe.after_fork()
    if FREEZE:
        gc.enable()
