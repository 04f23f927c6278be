"""`./test.sh scale`: start-up and memory of generated apps with many models and routes."""
