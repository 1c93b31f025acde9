"""The HTTP clients: ``Client`` (blocking) and ``AsyncClient`` (asyncio), both on ``httpx``.

Every write (POST, PUT, PATCH, DELETE) carries an ``Idempotency-Key``: a new UUID4 unless the
caller passes one, kept on every retry. What is safe to send again is sent again: a 409
``idempotency_key_in_use`` (the first try is still running), 429, 503, 504 and a request that got
no answer at all, waiting as ``Retry-After`` says or backing off (docs/idempotency.md).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any, AsyncIterator, Dict, Iterator, Mapping, Optional, Union

import httpx

from ._retry import WRITES, RetryPolicy, asks_for_retry, backoff, policy_of, retry_delay
from .errors import ApiError
from .resources import (
    AgentMirror,
    AsyncAgentMirror,
    AsyncEnvironment,
    AsyncParticipant,
    Environment,
    Participant,
)

__all__ = ["Client", "AsyncClient", "USER_AGENT"]

__version__ = "0.1.0"
USER_AGENT = f"evalp-python/{__version__}"

Params = Mapping[str, Union[str, int, float, bool, None]]


class _Base:
    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str],
        access_token: Optional[str],
        retry: Union[RetryPolicy, bool, None],
        headers: Optional[Mapping[str, str]],
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = policy_of(retry)
        self._headers: Dict[str, str] = {"user-agent": USER_AGENT, "accept": "application/json"}
        self._headers.update(headers or {})
        if api_key is not None:
            self._headers["x-api-key"] = api_key
        if access_token is not None:
            self._headers["authorization"] = f"Bearer {access_token}"

    def _build(
        self,
        http: Union[httpx.Client, httpx.AsyncClient],
        method: str,
        path: str,
        json: Any,
        params: Optional[Params],
        idempotency_key: Optional[str],
        headers: Optional[Mapping[str, str]],
    ) -> httpx.Request:
        method = method.upper()
        merged = dict(self._headers)
        merged.update(headers or {})
        if method in WRITES:
            given = idempotency_key or next(
                (value for name, value in merged.items() if name.lower() == "idempotency-key"), None
            )
            merged = {name: value for name, value in merged.items() if name.lower() != "idempotency-key"}
            merged["idempotency-key"] = given or str(uuid.uuid4())
        query = {name: value for name, value in (params or {}).items() if value is not None}
        url = path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"
        return http.build_request(method, url, json=json, params=query or None, headers=merged)

    @staticmethod
    def _result(response: httpx.Response) -> Any:
        if response.status_code >= 400:
            raise ApiError.from_response(response)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()


class Client(_Base):
    """A blocking client of the API.

    ``Client("https://api.example.com", api_key="evk_...")`` for a backend, ``access_token=`` for
    a log-in's token or a participant token. ``retry=False`` turns retries off; a ``RetryPolicy``
    changes them. ``http_client`` lets you bring your own ``httpx.Client`` (proxies, transports).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str] = None,
        access_token: Optional[str] = None,
        retry: Union[RetryPolicy, bool, None] = None,
        timeout: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        super().__init__(base_url, api_key=api_key, access_token=access_token, retry=retry, headers=headers)
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.Client(timeout=timeout)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Optional[Params] = None,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Any:
        """Sends a request and answers its JSON body (``None`` for a 204); raises ``ApiError``."""
        return self._result(self.send(method, path, json=json, params=params,
                                      idempotency_key=idempotency_key, headers=headers))

    def send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Optional[Params] = None,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> httpx.Response:
        """Like ``request`` but answers the (read) ``httpx.Response`` whatever its status."""
        request = self._build(self._http, method, path, json, params, idempotency_key, headers)
        policy = self.retry
        attempt = 1
        while True:
            last = attempt >= policy.attempts
            try:
                response = self._http.send(request)
                response.read()
            except httpx.UnsupportedProtocol:
                raise  # a wrong URL: no try will fare better
            except httpx.TransportError:
                # No answer (refused, reset, timed out): the same key makes sending again safe.
                if last:
                    raise
                time.sleep(backoff(attempt, policy))
                attempt += 1
                continue
            if last or not asks_for_retry(response):
                return response
            delay = retry_delay(response.headers.get("retry-after"), attempt, policy)
            if delay is None:
                return response
            response.close()
            time.sleep(delay)
            attempt += 1

    def paginate(self, path: str, *, params: Optional[Params] = None) -> Iterator[Dict[str, Any]]:
        """Every item of a cursor list, page after page (``limit`` in ``params`` sets the page size)."""
        cursor: Optional[str] = None
        while True:
            query = dict(params or {})
            if cursor is not None:
                query["cursor"] = cursor
            page = self.request("GET", path, params=query)
            yield from page["items"]
            cursor = page.get("next_cursor")
            if cursor is None:
                return

    def environment(self, organization_id: str, app_id: str, environment_id: str) -> Environment:
        """The resources of one environment: ``subjects``, ``programs``, ``evaluations``, ``webhooks``."""
        return Environment(self, organization_id, app_id, environment_id)

    @property
    def participant(self) -> Participant:
        """The participant's steps, for a client made with ``access_token=<participant token>``."""
        return Participant(self)

    @property
    def agent(self) -> AgentMirror:
        """The agent door's HTTP mirror, for a client made with ``access_token=<agent token>``."""
        return AgentMirror(self)


class AsyncClient(_Base):
    """The asyncio twin of ``Client``: the same methods, awaited; ``paginate`` is ``async for``."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str] = None,
        access_token: Optional[str] = None,
        retry: Union[RetryPolicy, bool, None] = None,
        timeout: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        super().__init__(base_url, api_key=api_key, access_token=access_token, retry=retry, headers=headers)
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Optional[Params] = None,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Any:
        """Sends a request and answers its JSON body (``None`` for a 204); raises ``ApiError``."""
        return self._result(await self.send(method, path, json=json, params=params,
                                            idempotency_key=idempotency_key, headers=headers))

    async def send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Optional[Params] = None,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> httpx.Response:
        """Like ``request`` but answers the (read) ``httpx.Response`` whatever its status."""
        request = self._build(self._http, method, path, json, params, idempotency_key, headers)
        policy = self.retry
        attempt = 1
        while True:
            last = attempt >= policy.attempts
            try:
                response = await self._http.send(request)
                await response.aread()
            except httpx.UnsupportedProtocol:
                raise
            except httpx.TransportError:
                if last:
                    raise
                await asyncio.sleep(backoff(attempt, policy))
                attempt += 1
                continue
            if last or not asks_for_retry(response):
                return response
            delay = retry_delay(response.headers.get("retry-after"), attempt, policy)
            if delay is None:
                return response
            await response.aclose()
            await asyncio.sleep(delay)
            attempt += 1

    async def paginate(self, path: str, *, params: Optional[Params] = None) -> AsyncIterator[Dict[str, Any]]:
        """Every item of a cursor list, page after page: ``async for item in client.paginate(...)``."""
        cursor: Optional[str] = None
        while True:
            query = dict(params or {})
            if cursor is not None:
                query["cursor"] = cursor
            page = await self.request("GET", path, params=query)
            for item in page["items"]:
                yield item
            cursor = page.get("next_cursor")
            if cursor is None:
                return

    def environment(self, organization_id: str, app_id: str, environment_id: str) -> AsyncEnvironment:
        return AsyncEnvironment(self, organization_id, app_id, environment_id)

    @property
    def participant(self) -> AsyncParticipant:
        return AsyncParticipant(self)

    @property
    def agent(self) -> AsyncAgentMirror:
        return AsyncAgentMirror(self)
