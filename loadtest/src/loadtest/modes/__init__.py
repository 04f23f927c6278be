"""The modes of ./test.sh, one shape each: options and help (command.py), settings, a runner
that returns its run folder, results and reports."""
