export { connectH2Handler, type H2HandlerOptions } from "./connect-h2-handler.js";
export {
  createH2Transport,
  DEFAULT_PING_INTERVAL_MS,
  DEFAULT_PING_TIMEOUT_MS,
  type H2Transport,
  type H2TransportOptions,
} from "./connect-h2-transport.js";
export { errorFromNode, errorFromReset, PING_TIMEOUT, StreamReset } from "./h2-errors.js";
export { neverReached, transportFailure } from "./peer-failure.js";
