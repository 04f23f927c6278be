"""`python -m loadtest`: the runner behind ./test.sh."""

import sys

from loadtest.cli import main

sys.exit(main())
