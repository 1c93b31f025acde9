"""The retry and idempotency rules, against a scripted local server (no platform needed)."""

from __future__ import annotations

import asyncio
import time
import uuid
from email.utils import formatdate

import httpx
import pytest
from conftest import error_body

from evalp import ApiError, AsyncClient, Client, RetryPolicy, parse_retry_after

FAST = RetryPolicy(base_delay=0.01)


def keys(server) -> list:
    return [seen.headers.get("idempotency-key") for seen in server.seen]


def test_a_write_retried_after_503_keeps_its_generated_key(scripted):
    server = scripted([(503, {}, error_body("unavailable")), (201, {}, {"id": "p1"})])
    with Client(server.url, api_key="evk_test", retry=FAST) as client:
        assert client.request("POST", "/v1/things", json={"name": "x"}) == {"id": "p1"}
    assert len(server.seen) == 2
    first, second = keys(server)
    assert first == second
    assert uuid.UUID(first).version == 4
    assert [seen.body for seen in server.seen] == [b'{"name": "x"}'] * 2
    assert server.seen[0].headers["x-api-key"] == "evk_test"


def test_a_callers_key_is_sent_and_kept(scripted):
    server = scripted([(504, {}, None), (429, {"retry-after": "0"}, None), (200, {}, {"ok": True})])
    with Client(server.url, retry=FAST) as client:
        assert client.request("PATCH", "/v1/x", json={}, idempotency_key="my-key") == {"ok": True}
    assert keys(server) == ["my-key"] * 3


def test_every_write_gets_a_fresh_key_and_reads_none(scripted):
    server = scripted([(200, {}, {})])
    with Client(server.url) as client:
        client.request("POST", "/a", json={})
        client.request("DELETE", "/a")
        client.request("GET", "/a")
    first, second, read = keys(server)
    assert first != second and uuid.UUID(second)
    assert read is None


def test_a_409_key_in_use_is_retried_another_409_is_not(scripted):
    server = scripted([(409, {}, error_body("idempotency_key_in_use")), (201, {}, {"done": 1})])
    with Client(server.url, retry=FAST) as client:
        assert client.request("POST", "/a", json={}) == {"done": 1}
    assert len(server.seen) == 2

    other = scripted([(409, {}, error_body("revision_conflict", current_revision=3)), (201, {}, {})])
    with Client(other.url, retry=FAST) as client, pytest.raises(ApiError) as raised:
        client.request("POST", "/a", json={})
    assert len(other.seen) == 1
    assert raised.value.status == 409
    assert raised.value.code == "revision_conflict"
    assert raised.value.context == {"current_revision": 3}


def test_tries_are_bounded_and_the_last_answer_raised(scripted):
    server = scripted([(503, {"x-request-id": "r-9"}, error_body("unavailable", request_id="r-9"))])
    with Client(server.url, retry=FAST) as client, pytest.raises(ApiError) as raised:
        client.request("POST", "/a", json={})
    assert len(server.seen) == 3
    assert (raised.value.status, raised.value.code, raised.value.request_id) == (503, "unavailable", "r-9")

    five = scripted([(503, {}, None)])
    with Client(five.url, retry=RetryPolicy(attempts=5, base_delay=0.001)) as client, pytest.raises(ApiError):
        client.request("GET", "/a")
    assert len(five.seen) == 5


def test_retry_false_sends_once(scripted):
    server = scripted([(503, {}, None), (200, {}, {})])
    with Client(server.url, retry=False) as client, pytest.raises(ApiError):
        client.request("POST", "/a", json={})
    assert len(server.seen) == 1


def test_retry_after_is_honoured_and_a_longer_one_returned_at_once(scripted):
    server = scripted([(429, {"retry-after": "1"}, error_body("rate_limited")), (200, {}, {"ok": 1})])
    started = time.monotonic()
    with Client(server.url, retry=FAST) as client:
        assert client.request("GET", "/a") == {"ok": 1}
    assert time.monotonic() - started >= 1.0

    patient = scripted([(429, {"retry-after": "120"}, error_body("rate_limited")), (200, {}, {})])
    started = time.monotonic()
    with Client(patient.url, retry=RetryPolicy(max_delay=5)) as client, pytest.raises(ApiError) as raised:
        client.request("GET", "/a")
    assert time.monotonic() - started < 1.0
    assert len(patient.seen) == 1
    assert raised.value.retry_after == "120"


def test_backoff_doubles_from_the_base_delay(scripted):
    server = scripted([(503, {}, None), (503, {}, None), (200, {}, {})])
    started = time.monotonic()
    with Client(server.url, retry=RetryPolicy(base_delay=0.2)) as client:
        client.request("GET", "/a")
    # 0.2 s then 0.4 s.
    assert time.monotonic() - started >= 0.6


def test_an_unanswered_request_is_sent_again_with_the_same_key(scripted):
    server = scripted(["drop", (201, {}, {"id": 1})])
    with Client(server.url, retry=FAST) as client:
        assert client.request("POST", "/a", json={"n": 1}) == {"id": 1}
    assert len(server.seen) == 2
    assert keys(server)[0] == keys(server)[1]

    always = scripted(["drop"])
    with Client(always.url, retry=FAST) as client, pytest.raises(httpx.TransportError):
        client.request("POST", "/a", json={})
    assert len(always.seen) == 3


def test_parse_retry_after():
    now = 1_800_000_000.0
    assert parse_retry_after("7", now) == 7
    assert parse_retry_after(formatdate(now + 30, usegmt=True), now) == pytest.approx(30, abs=1)
    assert parse_retry_after(formatdate(now - 30, usegmt=True), now) == 0
    assert parse_retry_after("-1", now) is None
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after("", now) is None
    assert parse_retry_after(None, now) is None


def test_http_date_retry_after_is_waited_for(scripted):
    server = scripted([(503, {"retry-after": formatdate(time.time() + 2, usegmt=True)}, None), (200, {}, {})])
    started = time.monotonic()
    with Client(server.url, retry=FAST) as client:
        client.request("GET", "/a")
    # An HTTP date has whole seconds: at least one second is left of the two asked for.
    assert time.monotonic() - started >= 0.9


def test_the_async_client_retries_with_the_same_key(scripted):
    server = scripted([(503, {}, None), "drop", (201, {}, {"id": "a1"})])

    async def run() -> object:
        async with AsyncClient(server.url, access_token="tok", retry=FAST) as client:
            return await client.request("POST", "/v1/things", json={"name": "y"})

    assert asyncio.run(run()) == {"id": "a1"}
    assert len(server.seen) == 3
    assert len(set(keys(server))) == 1
    assert server.seen[0].headers["authorization"] == "Bearer tok"


def test_the_async_client_raises_api_errors(scripted):
    server = scripted([(404, {"x-request-id": "r-1"}, error_body("not_found", request_id="r-1", resource="x"))])

    async def run() -> ApiError:
        async with AsyncClient(server.url) as client:
            with pytest.raises(ApiError) as raised:
                await client.request("GET", "/x")
            return raised.value

    error = asyncio.run(run())
    assert (error.status, error.code, error.request_id, error.context) == (404, "not_found", "r-1", {"resource": "x"})
