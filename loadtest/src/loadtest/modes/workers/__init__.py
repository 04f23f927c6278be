"""`./test.sh workers`: several worker processes per arm, their memory (PSS) and start-up."""
