"""Locust against a trivial endpoint: how fast can the load generator itself go?"""

from locust import FastHttpUser, constant, task


class CalibrationUser(FastHttpUser):
    wait_time = constant(0)

    @task
    def read_trivial(self) -> None:
        with self.client.get("/", catch_response=True, allow_redirects=False) as response:
            if response.status_code != 200:
                response.failure(f"status {response.status_code}")
