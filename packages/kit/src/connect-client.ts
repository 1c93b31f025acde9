import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";

/**
 * An HTTP/2 Connect transport to another service, connected on its first call so that the
 * peer's address may be settled after this service is built (services that call each other
 * start in any order). Share one per peer: it holds that peer's HTTP/2 session.
 */
export function createServiceTransport(baseUrl: () => string, timeoutMs: number): Transport {
  let transport: Transport | undefined;
  const connected = () => {
    transport ??= createConnectTransport({
      baseUrl: baseUrl(),
      httpVersion: "2",
      sessionManager: new Http2SessionManager(baseUrl()),
      defaultTimeoutMs: timeoutMs,
    });
    return transport;
  };
  return {
    unary: (...args) => connected().unary(...args),
    stream: (...args) => connected().stream(...args),
  };
}
