"""A numbered body's {n}: a number of its own for every request, in every locust process."""

import os

from loadtest.load.locustfiles.checked import next_number


def test_numbers_differ_within_a_process_and_after_a_fork() -> None:
    """Locust's --processes forks its workers after importing the locustfile: a child must not
    repeat its parent's numbers."""
    here = {next_number() for _ in range(3)}
    assert len(here) == 3 and all(number.isdigit() for number in here)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its numbers, to the parent
        os.close(read)
        os.write(write, " ".join(next_number() for _ in range(3)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        in_child = set(pipe.read().split())
    os.waitpid(child, 0)
    parent_next = {next_number() for _ in range(3)}
    assert len(in_child) == 3 and not in_child & (here | parent_next)
