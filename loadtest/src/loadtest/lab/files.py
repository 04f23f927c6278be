"""Writing a file into a run folder (or any folder the lab writes into) without following what is
already there: the text goes to a new temporary file beside it (created exclusively, so never
through a planted link), which then replaces the name with `os.replace`. A symlink planted at
that name is replaced itself, and the file it pointed at, outside the folder, is left as it was
(issue 53)."""

import os
import tempfile
from pathlib import Path

from loadtest.lab.errors import LabError


def current_umask() -> int:
    """This process's umask, read without changing it (Linux 4.7+ names it); 022 elsewhere."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def write_text_safely(path: Path, text: str) -> None:
    """`path` holds `text` afterwards, as a regular file of its own; one line on failure."""
    try:
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as error:
        raise LabError(f"cannot write {path}: {error.strerror}") from None
    try:
        # As open() would make it: mkstemp's 0600 would hide reports from other readers.
        os.fchmod(descriptor, 0o666 & ~current_umask())
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise LabError(f"cannot write {path}: {error.strerror}") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
