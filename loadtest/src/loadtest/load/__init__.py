"""Load in paired windows: scenarios, the timetable, locust and wrk runs, calibration,
verification before timing, window records, and the paired runner every mode uses."""
