"""The agent helper: drives an interview over the agent door (docs/interview.md#the-agent-protocol).

A LiveKit Agents or Pipecat worker opens an agent session with an ``interviews:agent`` key
(``env.evaluations.agent_session(evaluation_id)``), then::

    async with await AgentConnection.connect(session["server_url"], session["agent_token"]) as agent:
        await agent.utterance("agent", "How many years of experience do you have?", started_at=now())
        ack = await agent.propose("years", {"value": 5}, "Five years, right?")
        await agent.wait_for(lambda interview: "pending_proposal" not in interview)

Each command is answered by its ack (or raises ``AgentCommandError``); every state the platform
pushes updates ``agent.interview``. A dropped socket is reopened with the same token and the
commands still waiting are sent again with the same ``id``: the platform runs a command id at
most once and answers a repeat with the stored ack, so nothing is recorded twice. A newer agent
session supersedes this one: the socket is closed, nothing is reopened, and every waiting or
later call raises ``AgentSessionSuperseded``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Tuple, Union, cast

from .errors import AgentCommandError, AgentDisconnected, AgentError, AgentSessionSuperseded
from .models import AckFrame, Command, Interview, JSON

from websockets.exceptions import ConnectionClosed


def _connect_function() -> Tuple[Callable[..., Any], str]:
    """``connect`` and its headers argument: websockets >= 13 has a new asyncio client; 10 to 12
    have only the legacy one."""
    try:
        module = importlib.import_module("websockets.asyncio.client")
        return module.connect, "additional_headers"
    except ImportError:
        module = importlib.import_module("websockets.legacy.client")
        return module.connect, "extra_headers"


_ws_connect, _HEADERS_ARG = _connect_function()

__all__ = ["AgentConnection", "Timestamp"]

#: The close code the platform uses when the token stops being valid (superseded or expired).
CLOSE_UNAUTHORIZED = 4401

log = logging.getLogger("evalp.agent")

Timestamp = Union[datetime, str]


def _timestamp(value: Timestamp) -> str:
    if isinstance(value, str):
        return value
    at = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _handshake_status(error: BaseException) -> Optional[int]:
    """The HTTP status a refused WebSocket handshake got, whichever websockets version raised it."""
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


class AgentConnection:
    """One agent's socket on one interview, with typed commands and reconnection.

    ``reconnect_attempts`` bounds the tries to reopen a dropped socket (waiting ``reconnect_delay``
    seconds, doubled each time up to 5 s); ``command_timeout`` bounds the wait for an answer;
    ``on_frame`` sees every frame received (acks, errors, states), e.g. to log them.
    """

    def __init__(
        self,
        server_url: str,
        token: str,
        *,
        reconnect: bool = True,
        reconnect_attempts: int = 5,
        reconnect_delay: float = 0.5,
        command_timeout: float = 15.0,
        open_timeout: float = 10.0,
        id_prefix: str = "cmd",
        on_frame: Optional[Callable[[JSON], None]] = None,
    ) -> None:
        self.server_url = server_url
        self._token = token
        self.reconnect = reconnect
        self.reconnect_attempts = reconnect_attempts
        self.reconnect_delay = reconnect_delay
        self.command_timeout = command_timeout
        self.open_timeout = open_timeout
        self.id_prefix = id_prefix
        self.on_frame = on_frame
        #: The last snapshot of the interview seen (from a state push or an ack).
        self.interview: Optional[Interview] = None
        #: How many times the socket was reopened after a drop.
        self.reconnects = 0
        self._ws: Any = None
        self._reader: Optional["asyncio.Task[None]"] = None
        self._pending: Dict[str, Tuple[JSON, "asyncio.Future[AckFrame]"]] = {}
        self._watchers: List[Tuple[Callable[[Interview], bool], "asyncio.Future[Interview]"]] = []
        self._ending: Optional[AgentError] = None  # why the socket is closed for good
        self._closing = False
        self._done: Optional[asyncio.Event] = None

    # --- lifecycle ----------------------------------------------------------------------------

    @classmethod
    async def connect(cls, server_url: str, token: str, **options: Any) -> "AgentConnection":
        """Opens the socket and waits for the interview's first state."""
        connection = cls(server_url, token, **options)
        await connection.open()
        return connection

    async def open(self) -> None:
        self._done = asyncio.Event()
        self._ws = await self._open_socket()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        await self.wait_for(lambda _: True, timeout=self.open_timeout)

    async def __aenter__(self) -> "AgentConnection":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the socket (the platform pauses the interview if no agent socket reopens)."""
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await self._reader

    async def wait_closed(self) -> Optional[AgentError]:
        """Waits until the socket is closed for good; answers why (``None`` when closed by ``close``)."""
        assert self._done is not None, "open() first"
        await self._done.wait()
        return self._ending if not isinstance(self._ending, _ClosedByCaller) else None

    @property
    def revision(self) -> Optional[int]:
        return None if self.interview is None else self.interview.get("revision")

    @property
    def superseded(self) -> bool:
        return isinstance(self._ending, AgentSessionSuperseded)

    # --- commands -----------------------------------------------------------------------------

    async def send(self, command: Command, *, timeout: Optional[float] = None) -> AckFrame:
        """Runs a command (its ``id`` is generated unless given) and answers its ack frame.

        Raises ``AgentCommandError`` with the error frame's ``code`` when the platform refuses it,
        ``AgentSessionSuperseded`` or ``AgentDisconnected`` when the socket is gone for good."""
        if self._ending is not None:
            raise self._ending
        frame: JSON = dict(command)
        frame.setdefault("id", f"{self.id_prefix}-{uuid.uuid4()}")
        command_id = str(frame["id"])
        future: "asyncio.Future[AckFrame]" = asyncio.get_running_loop().create_future()
        self._pending[command_id] = (frame, future)
        try:
            try:
                await self._ws.send(json.dumps(frame))
            except ConnectionClosed:
                pass  # the reader reopens the socket and sends every waiting command again
            return await asyncio.wait_for(asyncio.shield(future), timeout or self.command_timeout)
        finally:
            self._pending.pop(command_id, None)

    async def utterance(
        self,
        speaker: str,
        text: str,
        *,
        started_at: Timestamp,
        ended_at: Optional[Timestamp] = None,
        modality: str = "voice",
        interrupted: Optional[bool] = None,
        id: Optional[str] = None,
    ) -> AckFrame:
        """Records what was said (``speaker`` ``agent`` or ``participant``); feeds turn latencies."""
        command: JSON = {"type": "utterance", "speaker": speaker, "modality": modality, "text": text,
                         "started_at": _timestamp(started_at)}
        if ended_at is not None:
            command["ended_at"] = _timestamp(ended_at)
        if interrupted is not None:
            command["interrupted"] = interrupted
        return await self._run(command, id)

    async def propose(
        self,
        question_id: str,
        proposed_answer: JSON,
        confirmation_text: str,
        *,
        expected_revision: Optional[int] = None,
        id: Optional[str] = None,
    ) -> AckFrame:
        """Proposes an answer heard; the participant confirms it (or ``resolve`` does, by voice).

        ``expected_revision`` defaults to the last revision seen."""
        revision = expected_revision if expected_revision is not None else self.revision
        return await self._run({"type": "propose", "question_id": question_id, "expected_revision": revision,
                                "proposed_answer": proposed_answer, "confirmation_text": confirmation_text}, id)

    async def resolve(self, proposal_id: str, decision: str, evidence_entry_id: str, *,
                      id: Optional[str] = None) -> AckFrame:
        """Confirms or rejects the pending proposal by voice, citing the participant's utterance."""
        return await self._run({"type": "resolve", "proposal_id": proposal_id, "decision": decision,
                                "evidence_entry_id": evidence_entry_id}, id)

    async def clarify(self, question_id: str, clarification_type: str, text: str, *,
                      id: Optional[str] = None) -> AckFrame:
        return await self._run({"type": "clarify", "question_id": question_id,
                                "clarification_type": clarification_type, "text": text}, id)

    async def consistency_follow_up(self, question_ids: List[str], text: str, *,
                                    id: Optional[str] = None) -> AckFrame:
        return await self._run({"type": "consistency_follow_up", "question_ids": question_ids, "text": text}, id)

    async def scenario_follow_up(self, scenario_id: str, text: str, *, id: Optional[str] = None) -> AckFrame:
        return await self._run({"type": "scenario_follow_up", "scenario_id": scenario_id, "text": text}, id)

    async def scenario_evidence(self, scenario_id: str, criterion_id: str, entry_ids: List[str], summary: str, *,
                                id: Optional[str] = None) -> AckFrame:
        return await self._run({"type": "scenario_evidence", "scenario_id": scenario_id,
                                "criterion_id": criterion_id, "entry_ids": entry_ids, "summary": summary}, id)

    async def scenario_gap(self, scenario_id: str, criterion_id: str, reason: str, *,
                           id: Optional[str] = None) -> AckFrame:
        return await self._run({"type": "scenario_gap", "scenario_id": scenario_id,
                                "criterion_id": criterion_id, "reason": reason}, id)

    async def report(self, *, usage: Optional[List[JSON]] = None, errors: Optional[List[JSON]] = None,
                     latency: Optional[JSON] = None, id: Optional[str] = None) -> AckFrame:
        """Reports provider usage, errors and latencies (kept even after the interview ended)."""
        command: JSON = {"type": "report"}
        for name, value in (("usage", usage), ("errors", errors), ("latency", latency)):
            if value is not None:
                command[name] = value
        return await self._run(command, id)

    async def pause(self, reason: str, *, id: Optional[str] = None) -> AckFrame:
        return await self._run({"type": "pause", "reason": reason}, id)

    async def resume(self, reason: str, *, id: Optional[str] = None) -> AckFrame:
        return await self._run({"type": "resume", "reason": reason}, id)

    async def _run(self, command: JSON, id: Optional[str]) -> AckFrame:
        if id is not None:
            command["id"] = id
        return await self.send(cast(Command, command))

    # --- state --------------------------------------------------------------------------------

    async def wait_for(self, predicate: Callable[[Interview], bool], *, timeout: Optional[float] = None) -> Interview:
        """Waits until the interview (as last seen, or a later state) satisfies ``predicate``."""
        if self.interview is not None and predicate(self.interview):
            return self.interview
        if self._ending is not None:
            raise self._ending
        future: "asyncio.Future[Interview]" = asyncio.get_running_loop().create_future()
        watcher = (predicate, future)
        self._watchers.append(watcher)
        try:
            return await asyncio.wait_for(future, timeout or self.command_timeout)
        finally:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

    async def wait_for_status(self, status: str, *, timeout: Optional[float] = None) -> Interview:
        return await self.wait_for(lambda interview: interview.get("status") == status, timeout=timeout)

    async def wait_for_proposal_resolved(self, *, timeout: Optional[float] = None) -> Interview:
        """Waits until no proposal is pending (the participant tapped, or a ``resolve`` counted)."""
        return await self.wait_for(lambda interview: "pending_proposal" not in interview, timeout=timeout)

    # --- the socket ---------------------------------------------------------------------------

    async def _open_socket(self) -> Any:
        headers = {"authorization": f"Bearer {self._token}"}
        options: Dict[str, Any] = {_HEADERS_ARG: headers, "open_timeout": self.open_timeout}
        return await _ws_connect(self.server_url, **options)

    def _see(self, interview: Interview) -> None:
        self.interview = interview
        for predicate, future in list(self._watchers):
            if not future.done() and predicate(interview):
                future.set_result(interview)

    def _handle(self, frame: JSON) -> None:
        if self.on_frame is not None:
            try:
                self.on_frame(frame)
            except Exception:  # a caller's callback must not take the connection down
                log.exception("on_frame raised")
        interview = frame.get("interview")
        if isinstance(interview, dict):
            self._see(cast(Interview, interview))
        kind = frame.get("type")
        if kind == "error" and frame.get("code") == "session_superseded":
            self._ending = self._ending or AgentSessionSuperseded(str(frame.get("message", "session superseded")))
        elif kind == "error" and frame.get("code") == "token_expired":
            self._ending = self._ending or AgentDisconnected(str(frame.get("message", "token expired")))
        waiting = self._pending.get(str(frame.get("id"))) if kind in ("ack", "error") else None
        if waiting is None or waiting[1].done():
            return
        if kind == "ack":
            waiting[1].set_result(cast(AckFrame, frame))
        else:
            context = frame.get("context")
            waiting[1].set_exception(AgentCommandError(
                str(frame.get("id")), str(frame.get("code")), str(frame.get("message", "")),
                context if isinstance(context, dict) else {}))

    async def _read(self) -> None:
        try:
            while True:
                try:
                    async for message in self._ws:
                        self._handle(json.loads(message))
                except ConnectionClosed:
                    pass
                if self._closing:
                    self._end(_ClosedByCaller("the connection was closed"))
                    return
                if self._ending is not None or self._ws.close_code == CLOSE_UNAUTHORIZED:
                    self._end(self._ending or AgentDisconnected("the agent token was refused"))
                    return
                if not self.reconnect:
                    self._end(AgentDisconnected(f"the socket closed ({self._ws.close_code})"))
                    return
                log.info("agent socket closed (%s); reopening", self._ws.close_code)
                try:
                    self._ws = await self._reopen()
                except AgentError as error:
                    self._end(error)
                    return
                if self._closing:  # closed by the caller while it was reopening
                    await self._ws.close()
                    self._end(_ClosedByCaller("the connection was closed"))
                    return
                self.reconnects += 1
                # Commands still waiting go again with the same ids: the platform answers a
                # command id it already ran with the stored ack.
                for frame, _ in list(self._pending.values()):
                    try:
                        await self._ws.send(json.dumps(frame))
                    except ConnectionClosed:
                        break
        except Exception as error:  # a bug or an unreadable frame: fail the waiters, do not hang
            self._end(AgentDisconnected(f"the agent connection failed: {error!r}"))

    async def _reopen(self) -> Any:
        delay = self.reconnect_delay
        last: Optional[BaseException] = None
        for _ in range(self.reconnect_attempts):
            if self._closing:
                raise _ClosedByCaller("the connection was closed")
            try:
                return await self._open_socket()
            except Exception as error:  # refused handshake, connection refused, timeout
                if _handshake_status(error) == 401:
                    raise AgentDisconnected("the agent token was refused (expired or superseded)") from error
                last = error
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
        raise AgentDisconnected(f"could not reopen the agent socket: {last!r}")

    def _end(self, reason: AgentError) -> None:
        self._ending = self._ending or reason
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(self._ending)
        for _, watcher in self._watchers:
            if not watcher.done():
                watcher.set_exception(self._ending)
        if self._done is not None:
            self._done.set()


class _ClosedByCaller(AgentDisconnected):
    """The caller closed the connection."""
