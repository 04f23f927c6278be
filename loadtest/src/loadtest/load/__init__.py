"""Load in paired windows, what every paired mode uses: slots and plans, the lab's scenarios,
the timetable, locust runs and its user, calibration, window records, and run_schedule."""
