"""The payload routes' budget of rows in flight (commons/hardening/payload_rows.py): what a
request weighs, and that a request waits for room, gets it when an answer leaves, and is
refused when none comes in time. (Over HTTP: tests/api/test_hostile_clients.py.)"""

import asyncio
from collections.abc import Callable

import pytest

from commons.hardening.payload_rows import PayloadRows, PayloadRowsMiddleware, answer_rows


@pytest.mark.parametrize(
    ("path", "query", "rows"),
    [
        ("/payloads/flat", b"items=5000", 5000),
        ("/payloads/flat", b"", 100),  # the default
        ("/payloads/nested", b"items=5000&comments=10", 55_000),
        ("/payloads/nested", b"items=10", 40),  # 3 comments by default
        ("/payloads/nested", b"items=%D9%A1&comments=x", 400),  # invalid: defaults (then a 422)
        ("/payloads/nested", b"comments=0&items=7&other=1", 7),
        ("/payloads/nested", b"items=%35000&comments=%31%30", 55_000),  # escaped digits
        ("/payloads/nested", b"it%65ms=5000&comments=10", 55_000),  # an escaped name
        ("/payloads/flat", b"items=1&items=5000", 5000),  # the last, as FastAPI reads it
        # A name that decodes to no Latin-1 character (schemathesis found a 500 here).
        ("/payloads/nested", b"%F3%84%AA%A6=&items=1&comments=4", 5),
        ("/payloads/flat", b"items=99999999999999", 5000),  # capped: a 422 will follow
    ],
)
def test_a_request_weighs_its_posts_and_their_comments(path: str, query: bytes, rows: int) -> None:
    assert answer_rows(path, query) == rows


def test_a_request_waits_for_room_and_is_refused_when_none_comes() -> None:
    # One request larger than the whole budget is let in when nothing else is in flight.
    async def alone() -> bool:
        return await PayloadRows(budget=100, wait_s=0.2).take(500)

    assert asyncio.run(alone())

    async def waits_then_refused() -> tuple[bool, int]:
        budget = PayloadRows(budget=100, wait_s=0.2)
        assert await budget.take(90)
        return await budget.take(20), budget.in_flight

    assert asyncio.run(waits_then_refused()) == (False, 90)

    async def waits_then_let_in() -> tuple[bool, int]:
        budget = PayloadRows(budget=100, wait_s=5)
        assert await budget.take(90)

        async def answer_leaves() -> None:
            await asyncio.sleep(0.05)
            budget.give_back(90)

        leaving = asyncio.create_task(answer_leaves())
        taken = await budget.take(20)
        await leaving
        return taken, budget.in_flight

    assert asyncio.run(waits_then_let_in()) == (True, 20)


def test_the_rows_being_built_are_given_back_when_the_answer_starts() -> None:
    """MAX_BUILDING_ROWS (issue 53): a second 5,000-post request waits while the first is being
    built, goes in as soon as the first answer starts, not once it has left, and the rows
    budget is held until then."""
    events: list[str] = []
    in_flight: dict[str, int] = {}  # the rows budget's, as each began to be built

    async def scenario() -> tuple[list[str], int]:
        rows, building = PayloadRows(110_000, 5), PayloadRows(5_000, 5)
        first_may_start = asyncio.Event()

        async def app(scope: dict, _receive: object, send: Callable) -> None:
            name = scope["name"]
            events.append(f"{name} building")
            in_flight[name] = rows.in_flight
            if name == "first":
                await first_may_start.wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            if name == "first":
                await asyncio.sleep(0.05)  # its answer still leaving
            await send({"type": "http.response.body", "body": b"{}"})
            events.append(f"{name} sent")

        middleware = PayloadRowsMiddleware(app, rows, building)

        async def request(name: str) -> None:
            scope = {"type": "http", "method": "GET", "path": "/payloads/flat", "name": name}
            scope["query_string"] = b"items=5000"

            async def send(_message: dict) -> None:
                pass

            await middleware(scope, None, send)

        first = asyncio.create_task(request("first"))
        await asyncio.sleep(0.02)
        second = asyncio.create_task(request("second"))
        await asyncio.sleep(0.05)
        events.append("first may start")
        first_may_start.set()
        await asyncio.gather(first, second)
        return events, rows.in_flight + building.in_flight

    found, left = asyncio.run(scenario())
    assert found[:3] == ["first building", "first may start", "second building"]
    assert found.index("second building") < found.index("first sent")
    # Both hold their rows meanwhile: the first's answer is still leaving.
    assert in_flight == {"first": 5_000, "second": 10_000}
    assert left == 0
