"""The agent helper against the platform: a whole interview, a dropped socket, a supersession."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Awaitable, Callable, List, Tuple
from urllib.parse import urlparse, urlunparse

import pytest

from evalp import AgentCommandError, AgentConnection, AgentSessionSuperseded, ApiError, AsyncClient

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)


def at(ms: int) -> datetime:
    return START + timedelta(milliseconds=ms)


async def prepared(platform) -> Tuple[Any, Any, dict, dict]:
    """A consented interview with an agent session: (operator env, participant, evaluation, agent session)."""
    operator = AsyncClient(platform.url, api_key=platform.api_key)
    env = operator.environment(platform.org, platform.app, platform.env)
    imported = await env.subjects.import_batch(
        [{"external_id": f"agent-{uuid.uuid4()}", "identity_mode": "enterprise_managed", "profile": {}}]
    )
    evaluation = await env.evaluations.create(imported["receipts"][0]["subject_id"], platform.bundle_id)
    session = await env.evaluations.participant_session(evaluation["id"])
    participant = AsyncClient(platform.url, access_token=session["participant_token"]).participant
    started = await participant.start()
    assert started["interview"]["status"] == "not_started"
    consented = await participant.consent()
    assert consented["interview"]["status"] == "in_progress"
    agents = AsyncClient(platform.url, api_key=platform.agent_key)
    agent_session = await agents.environment(platform.org, platform.app, platform.env).evaluations.agent_session(
        evaluation["id"]
    )
    await agents.aclose()
    return env, participant, evaluation, agent_session


def test_the_agent_completes_an_interview_with_a_participant(platform):
    async def run() -> None:
        env, participant, evaluation, session = await prepared(platform)
        frames: List[dict] = []
        async with await AgentConnection.connect(
            session["server_url"], session["agent_token"], on_frame=frames.append
        ) as agent:
            assert agent.interview is not None and agent.interview["agent_connected"] is True
            assert agent.interview["question"]["id"] == "q1"

            # q1: proposed, confirmed by the participant's tap.
            await agent.utterance("agent", "How many years of experience do you have?", started_at=at(0), ended_at=at(2000))
            await agent.utterance("participant", "About five.", started_at=at(3000), ended_at=at(4000))
            ack = await agent.propose("q1", {"value": 5}, "Five years, is that right?")
            assert ack["type"] == "ack" and ack["entry"]["kind"] == "proposal"
            assert ack["interview"]["pending_proposal"]["id"] == ack["entry"]["id"]
            await participant.confirm(ack["entry"]["id"])
            after_q1 = await agent.wait_for_proposal_resolved()
            assert after_q1["question"]["id"] == "q2"

            # A stale revision and an invalid command are refused with their codes.
            with pytest.raises(AgentCommandError) as stale:
                await agent.propose("q2", {"option_id": "a"}, "Alpha?", expected_revision=1)
            assert stale.value.code == "revision_conflict"
            with pytest.raises(AgentCommandError) as invalid:
                await agent.send({"type": "clarify", "question_id": "q2"})  # type: ignore[typeddict-item]
            assert invalid.value.code == "validation_error"
            assert invalid.value.problems[0]["loc"][0] == "frame"

            # q2: proposed, confirmed by voice with the participant's utterance as evidence.
            proposal = await agent.propose("q2", {"option_id": "a"}, "Team Alpha?")
            said = await agent.utterance("participant", "Yes, Alpha.", started_at=at(6000), ended_at=at(7000))
            resolved = await agent.resolve(proposal["entry"]["id"], "confirm", said["entry"]["id"])
            assert "pending_proposal" not in resolved["interview"]

            # q3: a clarification, then a tap; the same command id answers the same ack.
            await agent.clarify("q3", "rephrase", "How good is your SQL?", id="clarify-q3")
            again = await agent.clarify("q3", "rephrase", "How good is your SQL?", id="clarify-q3")
            assert again["entry"]["seq"] > 0
            third = await agent.propose("q3", {"value": 4}, "Four out of five?")
            await participant.confirm(third["entry"]["id"])
            ready = await agent.wait_for(lambda interview: interview.get("ready_to_finish") is True)
            assert "pending_proposal" not in ready

            await participant.finish()
            completed = await agent.wait_for_status("completed")
            assert completed["status"] == "completed"
            # A last usage report after the end is kept.
            await agent.report(usage=[{"provider": "openai", "model": "gpt-4o", "unit": "input_tokens", "quantity": 1000}])

        assert any(frame["type"] == "state" for frame in frames)
        view = await env.evaluations.interview(evaluation["id"])
        assert view["status"] == "completed"
        entries = view["entries"]
        assert [entry["payload"]["via"] for entry in entries if entry["kind"] == "answer_recorded"] == ["tap", "voice", "tap"]
        assert sum(1 for entry in entries if entry["kind"] == "clarification") == 1
        assert entries[-1]["kind"] == "agent_report"
        assert view["metrics"]["usage"] == {"openai": {"gpt-4o": {"input_tokens": 1000}}}
        assert view["metrics"]["clarifications"] == 1

    asyncio.run(run())


class DroppingProxy:
    """A TCP proxy to the gateway whose connections the test can cut, as a network drop would."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.writers: List[asyncio.StreamWriter] = []
        self.connections = 0

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        upstream_reader, upstream_writer = await asyncio.open_connection(self.host, self.port)
        self.writers += [writer, upstream_writer]

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                sink.transport.abort()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    def drop(self) -> None:
        for writer in self.writers:
            writer.transport.abort()
        self.writers = []

    async def close(self) -> None:
        self.drop()
        self.server.close()
        await self.server.wait_closed()


def test_a_dropped_socket_is_reopened_and_waiting_commands_run_once(platform):
    async def run() -> None:
        env, _participant, evaluation, session = await prepared(platform)
        target = urlparse(session["server_url"])
        proxy = DroppingProxy(target.hostname or "127.0.0.1", target.port or 80)
        port = await proxy.start()
        via_proxy = urlunparse(target._replace(netloc=f"127.0.0.1:{port}"))
        agent = await AgentConnection.connect(via_proxy, session["agent_token"], reconnect_delay=0.05)
        await agent.utterance("agent", "Before the drop.", started_at=at(0))

        proxy.drop()
        # Sent while the socket is down or reopening: it goes (again) once the socket is back.
        ack = await agent.utterance("agent", "After the drop.", started_at=at(1000), id="after-drop")
        assert ack["type"] == "ack"
        assert agent.reconnects == 1 and proxy.connections == 2
        snapshot = await agent.wait_for(lambda interview: interview.get("agent_connected") is True)
        assert snapshot["status"] == "in_progress"
        await agent.close()
        await proxy.close()

        texts = [entry["payload"].get("text") for entry in (await env.evaluations.interview(evaluation["id"]))["entries"]
                 if entry["kind"] == "utterance"]
        assert texts == ["Before the drop.", "After the drop."]

    asyncio.run(run())


def test_a_newer_session_supersedes_the_connection(platform):
    async def run() -> None:
        env, _participant, evaluation, session = await prepared(platform)
        agent = await AgentConnection.connect(session["server_url"], session["agent_token"], reconnect_delay=0.05)
        agents = AsyncClient(platform.url, api_key=platform.agent_key)
        newer = await agents.environment(platform.org, platform.app, platform.env).evaluations.agent_session(
            evaluation["id"]
        )
        await agents.aclose()

        reason = await asyncio.wait_for(agent.wait_closed(), 10)
        assert isinstance(reason, AgentSessionSuperseded)
        assert agent.superseded and agent.reconnects == 0
        with pytest.raises(AgentSessionSuperseded):
            await agent.utterance("agent", "Still here?", started_at=at(0))

        # The newer session drives the interview.
        async with await AgentConnection.connect(newer["server_url"], newer["agent_token"]) as successor:
            assert (await successor.utterance("agent", "I take over.", started_at=at(0)))["type"] == "ack"

    asyncio.run(run())


def test_the_http_mirror_runs_commands_once_per_id(platform):
    async def run() -> None:
        _env, _participant, _evaluation, session = await prepared(platform)
        async with AsyncClient(platform.url, access_token=session["agent_token"]) as client:
            snapshot = await client.agent.interview()
            assert snapshot["status"] == "in_progress" and snapshot["agent_connected"] is False
            command = {"type": "utterance", "id": f"mirror-{uuid.uuid4()}", "speaker": "agent", "modality": "voice",
                       "text": "Over HTTP.", "started_at": "2026-01-01T10:00:00.000Z"}
            ack = await client.agent.command(command)  # type: ignore[arg-type]
            assert ack["type"] == "ack" and ack["id"] == command["id"]
            assert await client.agent.command(command) == ack  # type: ignore[arg-type]
            with pytest.raises(ApiError) as stale:
                await client.agent.command({"type": "propose", "question_id": "q1", "expected_revision": 1,
                                            "proposed_answer": {"value": 3}, "confirmation_text": "Three?"})
            assert (stale.value.status, stale.value.code) == (409, "revision_conflict")
            assert stale.value.request_id

    asyncio.run(run())
