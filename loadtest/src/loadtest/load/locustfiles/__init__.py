"""Locust users the harness runs (locust loads them by path): the paired protocol's, which every
paired mode runs, and the calibration's; the web UI's are in modes/up/locustfile.py."""
