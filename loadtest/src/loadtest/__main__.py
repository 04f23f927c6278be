"""`python -m loadtest`: the runner behind ./test.sh. As its own process, it adopts whatever its
children start and leave (lab/processes.py), and stops whatever is still below it when it ends,
however the mode ended: nothing a run started outlives it."""

import sys

from loadtest.cli import main
from loadtest.lab.processes import adopt_orphans, stop_descendants

adopt_orphans()
try:
    status = main()
finally:
    stop_descendants()
sys.exit(status)
