"""Fixtures: a scripted local HTTP server for the client's own rules, and the platform the
integration test (tests/api/python-sdk.int.test.ts) starts and describes in EVALP_* variables."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

import pytest

# One scripted answer: (status, headers, JSON body), or "drop" to close the connection unanswered.
Answer = Union[Tuple[int, Dict[str, str], Any], str]


@dataclass
class Seen:
    method: str
    path: str
    headers: Dict[str, str]
    body: bytes


@dataclass
class ScriptedServer:
    """Answers requests from a script, in order (the last answer repeats), recording each."""

    answers: List[Answer]
    url: str = ""
    seen: List[Seen] = field(default_factory=list)


@pytest.fixture
def scripted() -> Iterator[Callable[[List[Answer]], ScriptedServer]]:
    servers: List[ThreadingHTTPServer] = []

    def start(answers: List[Answer]) -> ScriptedServer:
        state = ScriptedServer(list(answers))

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:  # quiet
                pass

            def handle_one(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                state.seen.append(
                    Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                index = min(len(state.seen), len(state.answers)) - 1
                answer = state.answers[index]
                if answer == "drop":
                    self.close_connection = True
                    return
                status, headers, payload = answer  # type: ignore[misc]
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if data:
                    self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        state.url = f"http://127.0.0.1:{server.server_address[1]}"
        return state

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class Platform:
    url: str
    api_key: str
    org: str
    app: str
    env: str
    agent_key: str
    bundle_id: str


@pytest.fixture(scope="session")
def platform() -> Platform:
    """The running platform. Its tests fail (never skip) without it: run them through
    tests/api/python-sdk.int.test.ts, which starts one and sets these variables."""
    names = ["EVALP_URL", "EVALP_API_KEY", "EVALP_ORG", "EVALP_APP", "EVALP_ENV", "EVALP_AGENT_KEY", "EVALP_BUNDLE_ID"]
    missing = [name for name in names if not os.environ.get(name)]
    if missing:
        pytest.fail(f"no platform to test against: set {', '.join(missing)}")
    values: List[str] = [os.environ[name] for name in names]
    return Platform(*values)


def error_body(code: str, message: str = "refused", request_id: Optional[str] = "req-1", **context: Any) -> Any:
    return {"detail": {"code": code, "message": message, "context": context, "request_id": request_id}}
