"""The Python client of evalp: typed models, sync and async HTTP clients with idempotent retries,
cursor pagination, webhook verification and an agent helper for the agent door."""

from ._retry import RetryPolicy, parse_retry_after
from .client import USER_AGENT, AsyncClient, Client, __version__
from .errors import (
    AgentCommandError,
    AgentDisconnected,
    AgentError,
    AgentSessionSuperseded,
    ApiError,
    EvalpError,
    WebhookVerificationError,
)
from .webhooks import sign_webhook, verify_webhook

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .agent import AgentConnection


def __getattr__(name: str) -> object:
    # The agent helper needs `websockets` (the `agent` extra): imported on first use only.
    if name == "AgentConnection":
        from .agent import AgentConnection

        return AgentConnection
    raise AttributeError(f"module 'evalp' has no attribute {name!r}")


__all__ = [
    "AgentCommandError",
    "AgentConnection",
    "AgentDisconnected",
    "AgentError",
    "AgentSessionSuperseded",
    "ApiError",
    "AsyncClient",
    "Client",
    "EvalpError",
    "RetryPolicy",
    "USER_AGENT",
    "WebhookVerificationError",
    "__version__",
    "parse_retry_after",
    "sign_webhook",
    "verify_webhook",
]
