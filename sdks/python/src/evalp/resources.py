"""Resource helpers that take the organization, app and environment ids once.

``client.environment(org_id, app_id, env_id).subjects.import_batch([...])``. Anything not here
is one ``client.request(method, path, json=...)`` away (``env.path`` is the environment's prefix).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, Iterator, List, Optional, Sequence, cast

from .models import (
    AckFrame,
    AgentSession,
    Command,
    Evaluation,
    Interview,
    ParticipantSession,
    ParticipantStep,
    Program,
    Subject,
    SubjectImport,
    SubjectInput,
    WebhookEndpoint,
)

if TYPE_CHECKING:
    from .client import AsyncClient, Client

JSON = Dict[str, Any]


def _body(**fields: Any) -> JSON:
    """A request body without the fields left out (``None``)."""
    return {name: value for name, value in fields.items() if value is not None}


def _command(command: Command) -> JSON:
    frame: JSON = dict(command)
    frame.setdefault("id", f"cmd-{uuid.uuid4()}")
    return frame


class _Scoped:
    def __init__(self, organization_id: str, app_id: str, environment_id: str) -> None:
        self.organization_id = organization_id
        self.app_id = app_id
        self.environment_id = environment_id
        #: ``/v1/organizations/{org}/apps/{app}`` (templates and bundles live there).
        self.app_path = f"/v1/organizations/{organization_id}/apps/{app_id}"
        #: ``/v1/organizations/{org}/apps/{app}/environments/{env}``.
        self.path = f"{self.app_path}/environments/{environment_id}"


# --- blocking ---------------------------------------------------------------------------------


class Environment(_Scoped):
    def __init__(self, client: "Client", organization_id: str, app_id: str, environment_id: str) -> None:
        super().__init__(organization_id, app_id, environment_id)
        self.subjects = Subjects(client, self.path)
        self.programs = Programs(client, self.path)
        self.evaluations = Evaluations(client, self.path)
        self.webhooks = Webhooks(client, self.path)


class Subjects:
    def __init__(self, client: "Client", path: str) -> None:
        self._client, self._path = client, path

    def import_batch(self, items: Sequence[SubjectInput], *, idempotency_key: Optional[str] = None) -> SubjectImport:
        """Upserts 1 to 100 subjects by ``external_id``; one receipt per item (200 even when some fail)."""
        return cast(SubjectImport, self._client.request(
            "POST", f"{self._path}/subjects/batch", json={"items": list(items)}, idempotency_key=idempotency_key))

    def get(self, subject_id: str) -> Subject:
        return cast(Subject, self._client.request("GET", f"{self._path}/subjects/{subject_id}"))


class Programs:
    def __init__(self, client: "Client", path: str) -> None:
        self._client, self._path = client, path

    def create(self, name: str, *, idempotency_key: Optional[str] = None) -> Program:
        return cast(Program, self._client.request(
            "POST", f"{self._path}/programs", json={"name": name}, idempotency_key=idempotency_key))

    def list(self, *, limit: Optional[int] = None) -> Iterator[Program]:
        """Every program, newest first, across pages."""
        return cast(Iterator[Program], self._client.paginate(f"{self._path}/programs", params={"limit": limit}))


class Evaluations:
    def __init__(self, client: "Client", path: str) -> None:
        self._client, self._path = client, f"{path}/evaluations"

    def create(self, subject_id: str, bundle_id: str, *, program_id: Optional[str] = None,
               idempotency_key: Optional[str] = None) -> Evaluation:
        return cast(Evaluation, self._client.request(
            "POST", self._path, json=_body(subject_id=subject_id, bundle_id=bundle_id, program_id=program_id),
            idempotency_key=idempotency_key))

    def get(self, evaluation_id: str) -> Evaluation:
        return cast(Evaluation, self._client.request("GET", f"{self._path}/{evaluation_id}"))

    def interview(self, evaluation_id: str, *, after_seq: Optional[int] = None, limit: Optional[int] = None) -> JSON:
        """The interview's entries (paged by ``after_seq``) and metrics; 404 until the participant starts."""
        return cast(JSON, self._client.request(
            "GET", f"{self._path}/{evaluation_id}/interview", params={"after_seq": after_seq, "limit": limit}))

    def participant_session(self, evaluation_id: str, *, ttl_seconds: Optional[int] = None,
                            idempotency_key: Optional[str] = None) -> ParticipantSession:
        """A participant token to hand to the participant."""
        return cast(ParticipantSession, self._client.request(
            "POST", f"{self._path}/{evaluation_id}/participant-sessions", json=_body(ttl_seconds=ttl_seconds),
            idempotency_key=idempotency_key))

    def agent_session(self, evaluation_id: str, *, ttl_seconds: Optional[int] = None,
                      idempotency_key: Optional[str] = None) -> AgentSession:
        """An agent token for the interview (needs a key with ``interviews:agent``); supersedes the last one."""
        return cast(AgentSession, self._client.request(
            "POST", f"{self._path}/{evaluation_id}/agent-sessions", json=_body(ttl_seconds=ttl_seconds),
            idempotency_key=idempotency_key))


class Webhooks:
    def __init__(self, client: "Client", path: str) -> None:
        self._client, self._path = client, f"{path}/webhooks"

    def create(self, url: str, event_types: List[str], *, enabled: Optional[bool] = None,
               secret: Optional[str] = None, idempotency_key: Optional[str] = None) -> WebhookEndpoint:
        """Registers an endpoint; the answer carries its ``whsec_`` secret (keep it)."""
        return cast(WebhookEndpoint, self._client.request(
            "POST", self._path, json=_body(url=url, event_types=event_types, enabled=enabled, secret=secret),
            idempotency_key=idempotency_key))

    def list(self, *, limit: Optional[int] = None) -> Iterator[WebhookEndpoint]:
        return cast(Iterator[WebhookEndpoint], self._client.paginate(self._path, params={"limit": limit}))

    def get(self, endpoint_id: str) -> WebhookEndpoint:
        return cast(WebhookEndpoint, self._client.request("GET", f"{self._path}/{endpoint_id}"))

    def update(self, endpoint_id: str, *, url: Optional[str] = None, event_types: Optional[List[str]] = None,
               enabled: Optional[bool] = None) -> WebhookEndpoint:
        return cast(WebhookEndpoint, self._client.request(
            "PATCH", f"{self._path}/{endpoint_id}", json=_body(url=url, event_types=event_types, enabled=enabled)))

    def delete(self, endpoint_id: str) -> None:
        self._client.request("DELETE", f"{self._path}/{endpoint_id}")

    def rotate_secret(self, endpoint_id: str) -> WebhookEndpoint:
        return cast(WebhookEndpoint, self._client.request("POST", f"{self._path}/{endpoint_id}/rotate-secret"))

    def test(self, endpoint_id: str) -> JSON:
        return cast(JSON, self._client.request("POST", f"{self._path}/{endpoint_id}/test"))


class Participant:
    """A participant's steps (docs/interview.md), with a client made with the participant token."""

    _path = "/v1/participant/interview"

    def __init__(self, client: "Client") -> None:
        self._client = client

    def start(self) -> ParticipantStep:
        return cast(ParticipantStep, self._client.request("POST", f"{self._path}/start"))

    def consent(self) -> ParticipantStep:
        return cast(ParticipantStep, self._client.request("POST", f"{self._path}/consent", json={"consented": True}))

    def answer(self, question_id: str, answer: JSON) -> ParticipantStep:
        return cast(ParticipantStep, self._client.request(
            "POST", f"{self._path}/answers", json={"question_id": question_id, "answer": answer}))

    def finish(self) -> ParticipantStep:
        return cast(ParticipantStep, self._client.request("POST", f"{self._path}/finish"))

    def confirm(self, proposal_id: str) -> ParticipantStep:
        return cast(ParticipantStep, self._client.request("POST", f"{self._path}/proposals/{proposal_id}/confirm"))

    def reject(self, proposal_id: str, reason: Optional[str] = None) -> ParticipantStep:
        return cast(ParticipantStep, self._client.request(
            "POST", f"{self._path}/proposals/{proposal_id}/reject", json=_body(reason=reason)))


class AgentMirror:
    """The agent door's HTTP mirror, for a client made with ``access_token=<agent token>``: one
    command per request, answered with its ack frame (a refusal raises ``ApiError``). Without a
    socket the agent never "connects": nothing pauses the interview when it stops calling."""

    _path = "/v1/agent/interview"

    def __init__(self, client: "Client") -> None:
        self._client = client

    def command(self, command: Command) -> AckFrame:
        """Runs a command (its ``id`` generated unless given); a repeat of an ``id`` answers the stored ack."""
        return cast(AckFrame, self._client.request("POST", f"{self._path}/commands", json=_command(command)))

    def interview(self) -> Interview:
        """The interview's snapshot, as the agent sees it."""
        return cast(Interview, self._client.request("GET", self._path)["interview"])


# --- asyncio ----------------------------------------------------------------------------------


class AsyncEnvironment(_Scoped):
    def __init__(self, client: "AsyncClient", organization_id: str, app_id: str, environment_id: str) -> None:
        super().__init__(organization_id, app_id, environment_id)
        self.subjects = AsyncSubjects(client, self.path)
        self.programs = AsyncPrograms(client, self.path)
        self.evaluations = AsyncEvaluations(client, self.path)
        self.webhooks = AsyncWebhooks(client, self.path)


class AsyncSubjects:
    def __init__(self, client: "AsyncClient", path: str) -> None:
        self._client, self._path = client, path

    async def import_batch(self, items: Sequence[SubjectInput], *,
                           idempotency_key: Optional[str] = None) -> SubjectImport:
        return cast(SubjectImport, await self._client.request(
            "POST", f"{self._path}/subjects/batch", json={"items": list(items)}, idempotency_key=idempotency_key))

    async def get(self, subject_id: str) -> Subject:
        return cast(Subject, await self._client.request("GET", f"{self._path}/subjects/{subject_id}"))


class AsyncPrograms:
    def __init__(self, client: "AsyncClient", path: str) -> None:
        self._client, self._path = client, path

    async def create(self, name: str, *, idempotency_key: Optional[str] = None) -> Program:
        return cast(Program, await self._client.request(
            "POST", f"{self._path}/programs", json={"name": name}, idempotency_key=idempotency_key))

    def list(self, *, limit: Optional[int] = None) -> AsyncIterator[Program]:
        return cast(AsyncIterator[Program], self._client.paginate(f"{self._path}/programs", params={"limit": limit}))


class AsyncEvaluations:
    def __init__(self, client: "AsyncClient", path: str) -> None:
        self._client, self._path = client, f"{path}/evaluations"

    async def create(self, subject_id: str, bundle_id: str, *, program_id: Optional[str] = None,
                     idempotency_key: Optional[str] = None) -> Evaluation:
        return cast(Evaluation, await self._client.request(
            "POST", self._path, json=_body(subject_id=subject_id, bundle_id=bundle_id, program_id=program_id),
            idempotency_key=idempotency_key))

    async def get(self, evaluation_id: str) -> Evaluation:
        return cast(Evaluation, await self._client.request("GET", f"{self._path}/{evaluation_id}"))

    async def interview(self, evaluation_id: str, *, after_seq: Optional[int] = None,
                        limit: Optional[int] = None) -> JSON:
        return cast(JSON, await self._client.request(
            "GET", f"{self._path}/{evaluation_id}/interview", params={"after_seq": after_seq, "limit": limit}))

    async def participant_session(self, evaluation_id: str, *, ttl_seconds: Optional[int] = None,
                                  idempotency_key: Optional[str] = None) -> ParticipantSession:
        return cast(ParticipantSession, await self._client.request(
            "POST", f"{self._path}/{evaluation_id}/participant-sessions", json=_body(ttl_seconds=ttl_seconds),
            idempotency_key=idempotency_key))

    async def agent_session(self, evaluation_id: str, *, ttl_seconds: Optional[int] = None,
                            idempotency_key: Optional[str] = None) -> AgentSession:
        return cast(AgentSession, await self._client.request(
            "POST", f"{self._path}/{evaluation_id}/agent-sessions", json=_body(ttl_seconds=ttl_seconds),
            idempotency_key=idempotency_key))


class AsyncWebhooks:
    def __init__(self, client: "AsyncClient", path: str) -> None:
        self._client, self._path = client, f"{path}/webhooks"

    async def create(self, url: str, event_types: List[str], *, enabled: Optional[bool] = None,
                     secret: Optional[str] = None, idempotency_key: Optional[str] = None) -> WebhookEndpoint:
        return cast(WebhookEndpoint, await self._client.request(
            "POST", self._path, json=_body(url=url, event_types=event_types, enabled=enabled, secret=secret),
            idempotency_key=idempotency_key))

    def list(self, *, limit: Optional[int] = None) -> AsyncIterator[WebhookEndpoint]:
        return cast(AsyncIterator[WebhookEndpoint], self._client.paginate(self._path, params={"limit": limit}))

    async def get(self, endpoint_id: str) -> WebhookEndpoint:
        return cast(WebhookEndpoint, await self._client.request("GET", f"{self._path}/{endpoint_id}"))

    async def update(self, endpoint_id: str, *, url: Optional[str] = None,
                     event_types: Optional[List[str]] = None, enabled: Optional[bool] = None) -> WebhookEndpoint:
        return cast(WebhookEndpoint, await self._client.request(
            "PATCH", f"{self._path}/{endpoint_id}", json=_body(url=url, event_types=event_types, enabled=enabled)))

    async def delete(self, endpoint_id: str) -> None:
        await self._client.request("DELETE", f"{self._path}/{endpoint_id}")

    async def rotate_secret(self, endpoint_id: str) -> WebhookEndpoint:
        return cast(WebhookEndpoint, await self._client.request("POST", f"{self._path}/{endpoint_id}/rotate-secret"))

    async def test(self, endpoint_id: str) -> JSON:
        return cast(JSON, await self._client.request("POST", f"{self._path}/{endpoint_id}/test"))


class AsyncParticipant:
    _path = "/v1/participant/interview"

    def __init__(self, client: "AsyncClient") -> None:
        self._client = client

    async def start(self) -> ParticipantStep:
        return cast(ParticipantStep, await self._client.request("POST", f"{self._path}/start"))

    async def consent(self) -> ParticipantStep:
        return cast(ParticipantStep, await self._client.request(
            "POST", f"{self._path}/consent", json={"consented": True}))

    async def answer(self, question_id: str, answer: JSON) -> ParticipantStep:
        return cast(ParticipantStep, await self._client.request(
            "POST", f"{self._path}/answers", json={"question_id": question_id, "answer": answer}))

    async def finish(self) -> ParticipantStep:
        return cast(ParticipantStep, await self._client.request("POST", f"{self._path}/finish"))

    async def confirm(self, proposal_id: str) -> ParticipantStep:
        return cast(ParticipantStep, await self._client.request(
            "POST", f"{self._path}/proposals/{proposal_id}/confirm"))

    async def reject(self, proposal_id: str, reason: Optional[str] = None) -> ParticipantStep:
        return cast(ParticipantStep, await self._client.request(
            "POST", f"{self._path}/proposals/{proposal_id}/reject", json=_body(reason=reason)))


class AsyncAgentMirror:
    _path = "/v1/agent/interview"

    def __init__(self, client: "AsyncClient") -> None:
        self._client = client

    async def command(self, command: Command) -> AckFrame:
        return cast(AckFrame, await self._client.request("POST", f"{self._path}/commands", json=_command(command)))

    async def interview(self) -> Interview:
        return cast(Interview, (await self._client.request("GET", self._path))["interview"])
