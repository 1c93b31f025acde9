import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/** The frames the platform may send on each door, as `/asyncapi.json` describes them, compiled. */
export type FrameCatalog = {
  /** What is wrong with a frame the platform sent on the door at `address`; empty when it matches. */
  problems(address: string, frame: unknown): string[];
};

type Ref = { $ref: string };
type Operation = { action: "send" | "receive"; channel: Ref; messages: Ref[]; reply?: { messages: Ref[] } };
type AsyncApiDocument = {
  channels: Record<string, { address: string; messages: Record<string, Ref> }>;
  operations: Record<string, Operation>;
  components: { schemas: Record<string, unknown>; messages: Record<string, { payload: Ref }> };
};

const DOCUMENT_ID = "asyncapi.json";
const last = (ref: Ref) => ref.$ref.split("/").pop() as string;

/**
 * Compiles, per door, every message the platform sends there: the `send` operations' messages and
 * the replies of the `receive` ones. The payloads are JSON Schema (the OpenAPI document's, 2020-12).
 */
export function compileFrameCatalog(document: AsyncApiDocument): FrameCatalog {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: document.components.schemas } });
  const sent = new Map<string, Map<string, ValidateFunction>>();
  for (const operation of Object.values(document.operations)) {
    const channel = document.channels[last(operation.channel)];
    if (!channel) throw new Error(`operation on unknown channel ${operation.channel.$ref}`);
    const refs = operation.action === "send" ? operation.messages : (operation.reply?.messages ?? []);
    const compiled = sent.get(channel.address) ?? new Map<string, ValidateFunction>();
    for (const ref of refs) {
      const message = document.components.messages[last(channel.messages[last(ref)] as Ref)];
      if (!message) throw new Error(`no message behind ${ref.$ref}`);
      compiled.set(last(ref), ajv.compile({ $ref: `${DOCUMENT_ID}${message.payload.$ref}` }));
    }
    sent.set(channel.address, compiled);
  }
  return {
    problems(address, frame) {
      const messages = sent.get(address);
      if (!messages) return [`no door at ${address} in the document`];
      const failures: string[] = [];
      for (const [name, validate] of messages) {
        if (validate(frame)) return [];
        failures.push(`${name}: ${ajv.errorsText(validate.errors, { dataVar: "frame" })}`);
      }
      return failures;
    },
  };
}

const catalogs = new Map<string, Promise<FrameCatalog>>();

/** The catalog the gateway at `origin` (http://host:port) serves, fetched once per origin. */
export function frameCatalogOf(origin: string): Promise<FrameCatalog> {
  let catalog = catalogs.get(origin);
  if (!catalog) {
    catalog = fetch(`${origin}/asyncapi.json`).then(async (response) => {
      if (response.status !== 200) throw new Error(`GET ${origin}/asyncapi.json answered ${response.status}`);
      return compileFrameCatalog((await response.json()) as AsyncApiDocument);
    });
    catalogs.set(origin, catalog);
  }
  return catalog;
}

/** Frames that did not match the document, not yet reported (see the API project's setup). */
const mismatches: string[] = [];

/** Checks a frame the platform sent on the socket at `url` (ws://…) against the served document. */
export function checkFrame(url: string, frame: unknown): void {
  const socket = new URL(url);
  const origin = `${socket.protocol === "wss:" ? "https:" : "http:"}//${socket.host}`;
  frameCatalogOf(origin).then(
    (catalog) => {
      const problems = catalog.problems(socket.pathname, frame);
      if (problems.length > 0) {
        mismatches.push(`${socket.pathname} ${JSON.stringify(frame)}\n  ${problems.join("\n  ")}`);
      }
    },
    (error: unknown) => mismatches.push(`${socket.pathname}: ${String(error)}`),
  );
}

/** The mismatches recorded since the last call, emptied. */
export function takeFrameMismatches(): string[] {
  return mismatches.splice(0);
}
