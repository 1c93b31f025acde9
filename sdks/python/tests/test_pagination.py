"""Cursor pagination as iterators, against a scripted server (pages of {items, next_cursor})."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs, urlparse

from evalp import AsyncClient, Client

PAGES = [
    (200, {}, {"items": [{"id": 1}, {"id": 2}], "next_cursor": "c1"}),
    (200, {}, {"items": [{"id": 3}, {"id": 4}], "next_cursor": "c2"}),
    (200, {}, {"items": [{"id": 5}], "next_cursor": None}),
]


def queries(server) -> list:
    return [parse_qs(urlparse(seen.path).query) for seen in server.seen]


def test_sync_paginate_follows_next_cursor(scripted):
    server = scripted(PAGES)
    with Client(server.url) as client:
        assert [item["id"] for item in client.paginate("/list", params={"limit": 2, "status": "x"})] == [1, 2, 3, 4, 5]
    assert queries(server) == [
        {"limit": ["2"], "status": ["x"]},
        {"limit": ["2"], "status": ["x"], "cursor": ["c1"]},
        {"limit": ["2"], "status": ["x"], "cursor": ["c2"]},
    ]


def test_paginate_is_lazy(scripted):
    server = scripted(PAGES)
    with Client(server.url) as client:
        items = client.paginate("/list")
        assert next(items)["id"] == 1
        assert len(server.seen) == 1


def test_async_paginate(scripted):
    server = scripted(PAGES)

    async def run() -> list:
        async with AsyncClient(server.url) as client:
            return [item["id"] async for item in client.paginate("/list", params={"limit": 2})]

    assert asyncio.run(run()) == [1, 2, 3, 4, 5]
    assert len(server.seen) == 3
