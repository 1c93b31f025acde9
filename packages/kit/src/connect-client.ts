import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";

/**
 * How deep a message may nest on the wire between the planes, both ends alike. Free-form JSON
 * (template contents, profiles, answers) travels as google.protobuf.Struct, two messages per
 * level of nesting, and protobuf's default of 100 refused what the gateway accepts (200 levels
 * of JSON): a scorecard expression of depth 25 failed to decode, a 500. Every Connect server
 * and client of the platform uses these.
 */
export const WIRE_READ_OPTIONS = {
  binaryOptions: { recursionLimit: 512 },
  jsonOptions: { recursionLimit: 512 },
} as const;

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
      ...WIRE_READ_OPTIONS,
    });
    return transport;
  };
  return {
    unary: (...args) => connected().unary(...args),
    stream: (...args) => connected().stream(...args),
  };
}
