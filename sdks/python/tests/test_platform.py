"""The clients against the running platform (tests/api/python-sdk.int.test.ts starts it)."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Tuple

import pytest

from evalp import ApiError, AsyncClient, Client, WebhookVerificationError, verify_webhook


def subject(prefix: str = "py") -> dict:
    return {"external_id": f"{prefix}-{uuid.uuid4()}", "identity_mode": "enterprise_managed", "profile": {"team": "a"}}


def test_sync_import_and_get_a_subject(platform):
    with Client(platform.url, api_key=platform.api_key) as client:
        env = client.environment(platform.org, platform.app, platform.env)
        item = subject()
        imported = env.subjects.import_batch([item, {**item, "profile": {}}])
        assert [receipt["item_index"] for receipt in imported["receipts"]] == [0, 1]
        ok, bad = imported["receipts"]
        assert ok["subject_id"] and not ok["error_code"]
        assert (bad["error_code"], bad["subject_id"]) == ("duplicate_in_batch", "")
        fetched = env.subjects.get(ok["subject_id"])
        assert (fetched["external_id"], fetched["profile"]) == (item["external_id"], {"team": "a"})


def test_the_same_key_replays_the_write(platform):
    with Client(platform.url, api_key=platform.api_key) as client:
        env = client.environment(platform.org, platform.app, platform.env)
        key = str(uuid.uuid4())
        first = env.programs.create("Replayed", idempotency_key=key)
        again = env.programs.create("Replayed", idempotency_key=key)
        assert again["id"] == first["id"]
        response = client.send("POST", f"{env.path}/programs", json={"name": "Replayed"}, idempotency_key=key)
        assert response.headers.get("idempotent-replayed") == "true"
        # Without a key of the caller's, each call is a new write.
        assert env.programs.create("Fresh")["id"] != env.programs.create("Fresh")["id"]


def test_pagination_across_pages(platform):
    with Client(platform.url, api_key=platform.api_key) as client:
        env = client.environment(platform.org, platform.app, platform.env)
        created = [env.programs.create(f"Paged {index}")["id"] for index in range(5)]
        listed = [program["id"] for program in env.programs.list(limit=2)]
        assert len(listed) == len(set(listed))
        # Newest first: the five just created lead the list, in reverse order of creation.
        assert listed[:5] == list(reversed(created))
        first_page = client.request("GET", f"{env.path}/programs", params={"limit": 2})
        assert len(first_page["items"]) == 2 and first_page["next_cursor"]


def test_errors_carry_status_code_and_request_id(platform):
    with Client(platform.url, api_key=platform.api_key) as client:
        env = client.environment(platform.org, platform.app, platform.env)
        with pytest.raises(ApiError) as missing:
            env.subjects.get(str(uuid.uuid4()))
        assert (missing.value.status, missing.value.code) == (404, "not_found")
        assert missing.value.message
        response = client.send("GET", f"{env.path}/subjects/{uuid.uuid4()}")
        assert ApiError.from_response(response).request_id == response.headers["x-request-id"]
        assert missing.value.request_id and missing.value.request_id != response.headers["x-request-id"]

        with pytest.raises(ApiError) as invalid:
            env.subjects.import_batch([])
        assert (invalid.value.status, invalid.value.code) == (422, "validation_error")
        assert invalid.value.problems[0]["loc"][:2] == ["body", "items"]
        assert invalid.value.request_id

    with Client(platform.url, api_key="evk_not_a_key") as stranger, pytest.raises(ApiError) as refused:
        stranger.environment(platform.org, platform.app, platform.env).programs.create("No")
    assert (refused.value.status, refused.value.code) == (401, "unauthenticated")

    # The agent key may only open agent sessions.
    with Client(platform.url, api_key=platform.agent_key) as agent, pytest.raises(ApiError) as forbidden:
        agent.environment(platform.org, platform.app, platform.env).programs.create("No")
    assert forbidden.value.status == 403 and forbidden.value.code == "forbidden"
    assert forbidden.value.context.get("required_scope") == "subjects:write"


def test_async_client_import_evaluate_and_paginate(platform):
    async def run() -> None:
        async with AsyncClient(platform.url, api_key=platform.api_key) as client:
            env = client.environment(platform.org, platform.app, platform.env)
            imported = await env.subjects.import_batch([subject("async")])
            subject_id = imported["receipts"][0]["subject_id"]
            evaluation = await env.evaluations.create(subject_id, platform.bundle_id)
            assert evaluation["status"] == "pending"
            assert (await env.evaluations.get(evaluation["id"]))["subject_id"] == subject_id
            session = await env.evaluations.participant_session(evaluation["id"], ttl_seconds=120)
            assert session["participant_token"]

            names = [f"Async {index}" for index in range(3)]
            for name in names:
                await env.programs.create(name)
            seen = [program["name"] async for program in env.programs.list(limit=1)]
            assert seen[:3] == list(reversed(names))

            with pytest.raises(ApiError) as missing:
                await env.evaluations.get(str(uuid.uuid4()))
            assert missing.value.code == "not_found" and missing.value.request_id

    asyncio.run(run())


class Receiver:
    """A webhook receiver on this machine: keeps every delivery's headers and raw body."""

    def __init__(self) -> None:
        self.deliveries: "queue.Queue[Tuple[Dict[str, str], bytes]]" = queue.Queue()
        deliveries = self.deliveries

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                deliveries.put(({name.lower(): value for name, value in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def next_of(self, event_type: str) -> Tuple[Dict[str, str], bytes]:
        deadline = time.monotonic() + 20
        while True:
            headers, body = self.deliveries.get(timeout=max(0.1, deadline - time.monotonic()))
            if json.loads(body).get("type") == event_type:
                return headers, body

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_webhook_endpoints_and_real_deliveries_verify(platform):
    receiver = Receiver()
    try:
        with Client(platform.url, api_key=platform.api_key) as client:
            hooks = client.environment(platform.org, platform.app, platform.env).webhooks
            endpoint = hooks.create(receiver.url, ["subject.imported"])
            secret = endpoint["secret"]
            assert secret.startswith("whsec_")
            assert "secret" not in hooks.get(endpoint["id"])
            assert endpoint["id"] in [listed["id"] for listed in hooks.list(limit=1)]

            hooks.test(endpoint["id"])
            headers, body = receiver.next_of("webhook.test")
            event = verify_webhook(secret, headers, body)
            assert event["type"] == "webhook.test"
            with pytest.raises(WebhookVerificationError):
                verify_webhook(secret, headers, body.replace(b"webhook.test", b"webhook.tost"))

            # After a rotation, deliveries carry both signatures: either secret verifies.
            rotated = hooks.rotate_secret(endpoint["id"])
            assert rotated["secret"] != secret
            hooks.test(endpoint["id"])
            headers, body = receiver.next_of("webhook.test")
            assert len(headers["webhook-signature"].split(" ")) == 2
            assert verify_webhook(rotated["secret"], headers, body)["type"] == "webhook.test"
            assert verify_webhook(secret, headers, body)["type"] == "webhook.test"

            assert hooks.update(endpoint["id"], enabled=False)["enabled"] is False
            assert hooks.delete(endpoint["id"]) is None
            with pytest.raises(ApiError) as gone:
                hooks.get(endpoint["id"])
            assert gone.value.code == "not_found"
    finally:
        receiver.close()
