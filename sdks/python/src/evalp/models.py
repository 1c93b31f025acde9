"""The shapes of the main resources and of the agent door's frames, as ``TypedDict``s.

Answers are plain ``dict``s parsed from JSON: these types name their keys for a type checker and
cost nothing at run time. Resources not listed here are ``Dict[str, Any]``
(``/openapi.json`` describes every one).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Literal, Optional, Union

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:
    from typing_extensions import NotRequired, TypedDict

JSON = Dict[str, Any]


class Page(TypedDict):
    """One page of a cursor list (docs/paging.md)."""

    items: List[JSON]
    next_cursor: Optional[str]


class SubjectInput(TypedDict):
    external_id: str
    identity_mode: str
    profile: NotRequired[JSON]


class Subject(TypedDict):
    id: str
    environment_id: str
    external_id: str
    identity_mode: str
    profile: JSON
    created_at: str
    updated_at: str


class SubjectReceipt(TypedDict):
    """One item's outcome: its ``subject_id``, or its ``error_code`` (docs/errors.md)."""

    item_index: int
    subject_id: str
    error_code: str


class SubjectImport(TypedDict):
    batch_id: str
    idempotent_replay: bool
    receipts: List[SubjectReceipt]


class Program(TypedDict):
    id: str
    environment_id: str
    name: str
    created_at: str


class Evaluation(TypedDict):
    id: str
    environment_id: str
    subject_id: str
    bundle_id: str
    program_id: Optional[str]
    status: str
    created_at: str


class ParticipantSession(TypedDict):
    session_id: str
    participant_token: str
    expires_at: str


class AgentSession(TypedDict):
    agent_session_id: str
    agent_token: str
    server_url: str
    expires_at: str
    interview_id: str


class WebhookEndpoint(TypedDict):
    id: str
    environment_id: str
    url: str
    event_types: List[str]
    enabled: bool
    created_at: str
    disabled_at: NotRequired[str]
    #: Only in the answers of a creation and a rotation: keep it to verify deliveries.
    secret: NotRequired[str]


class Connection(TypedDict):
    participant_token: str
    server_url: str
    expires_at: str


class Proposal(TypedDict):
    id: str
    question_id: str
    proposed_answer: JSON
    confirmation_text: str
    previous_answer: NotRequired[JSON]


class Interview(TypedDict, total=False):
    """The snapshot of an interview, as the participant and the agent see it (docs/interview.md)."""

    status: str
    consented: bool
    revision: int
    item_kind: str
    question: JSON
    scenario: JSON
    section: JSON
    progress: float
    missing: List[str]
    ready_to_finish: bool
    pending_proposal: Proposal
    agent_connected: bool
    paused_reason: str


class ParticipantStep(TypedDict):
    interview: Interview
    connection: NotRequired[Connection]


class Entry(TypedDict, total=False):
    id: str
    seq: int
    kind: str
    actor: str
    payload: JSON
    created_at: str


# The agent door's frames (``/asyncapi.json``).


class AckFrame(TypedDict):
    type: Literal["ack"]
    id: str
    entry: NotRequired[Entry]
    interview: Interview


class ErrorFrame(TypedDict):
    type: Literal["error"]
    id: NotRequired[str]
    code: str
    message: str
    context: JSON


class StateFrame(TypedDict):
    type: Literal["state"]
    interview: Interview


Frame = Union[AckFrame, ErrorFrame, StateFrame]

Speaker = Literal["agent", "participant"]
Modality = Literal["voice", "text"]


class UtteranceCommand(TypedDict):
    type: Literal["utterance"]
    speaker: Speaker
    modality: Modality
    text: str
    started_at: str
    ended_at: NotRequired[str]
    interrupted: NotRequired[bool]
    id: NotRequired[str]


class ProposeCommand(TypedDict):
    type: Literal["propose"]
    question_id: str
    expected_revision: int
    proposed_answer: JSON
    confirmation_text: str
    id: NotRequired[str]


class ResolveCommand(TypedDict):
    type: Literal["resolve"]
    proposal_id: str
    decision: Literal["confirm", "reject"]
    evidence_entry_id: str
    id: NotRequired[str]


class ClarifyCommand(TypedDict):
    type: Literal["clarify"]
    question_id: str
    clarification_type: Literal["definition", "repeat", "rephrase"]
    text: str
    id: NotRequired[str]


class ConsistencyFollowUpCommand(TypedDict):
    type: Literal["consistency_follow_up"]
    question_ids: List[str]
    text: str
    id: NotRequired[str]


class ScenarioFollowUpCommand(TypedDict):
    type: Literal["scenario_follow_up"]
    scenario_id: str
    text: str
    id: NotRequired[str]


class ScenarioEvidenceCommand(TypedDict):
    type: Literal["scenario_evidence"]
    scenario_id: str
    criterion_id: str
    entry_ids: List[str]
    summary: str
    id: NotRequired[str]


class ScenarioGapCommand(TypedDict):
    type: Literal["scenario_gap"]
    scenario_id: str
    criterion_id: str
    reason: str
    id: NotRequired[str]


class UsageLine(TypedDict):
    provider: str
    model: str
    unit: str
    quantity: float


class ProviderError(TypedDict):
    provider: str
    code: str
    message: str


class Latency(TypedDict, total=False):
    eou_ms: float
    llm_ttft_ms: float
    tts_ttfb_ms: float


class ReportCommand(TypedDict):
    type: Literal["report"]
    usage: NotRequired[List[UsageLine]]
    errors: NotRequired[List[ProviderError]]
    latency: NotRequired[Latency]
    id: NotRequired[str]


class PauseCommand(TypedDict):
    type: Literal["pause", "resume"]
    reason: str
    id: NotRequired[str]


Command = Union[
    UtteranceCommand,
    ProposeCommand,
    ResolveCommand,
    ClarifyCommand,
    ConsistencyFollowUpCommand,
    ScenarioFollowUpCommand,
    ScenarioEvidenceCommand,
    ScenarioGapCommand,
    ReportCommand,
    PauseCommand,
]
