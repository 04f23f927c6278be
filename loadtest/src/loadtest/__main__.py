"""`python -m loadtest`: the runner behind ./test.sh. It marks itself the owner of whatever it
starts (lab/leftovers.py), so that what a run killed outright leaves can be found and cleaned."""

import sys

from loadtest.cli import main
from loadtest.lab.leftovers import mark_this_run

mark_this_run()
sys.exit(main())
