import { type Receiver, startReceiver } from "@evalp/testing";

/** One span as an OTLP/HTTP JSON export carries it, decoded. */
export type ExportedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  scope: string;
  /** The exporting provider's `service.name`. */
  resourceService: string;
  /** The exporting provider's resource. */
  resource: Record<string, string | number | boolean>;
  attributes: Record<string, string | number | boolean>;
};

export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };

/**
 * An OTLP/HTTP receiver of the test's own: a real HTTP server that accepts what a trace exporter
 * posts to `<url>/v1/traces` (JSON) and decodes every span of it.
 */
export async function startOtlpReceiver(): Promise<{
  url: string;
  spans(): ExportedSpan[];
  close(): Promise<void>;
}> {
  const receiver: Receiver = await startReceiver();
  receiver.respond({ status: 200, headers: { "content-type": "application/json" }, body: "{}" });
  return {
    url: receiver.url,
    spans: () =>
      receiver.at("/v1/traces").flatMap((request) => {
        if (request.headers["content-type"] !== "application/json") {
          throw new Error(`an export of ${request.headers["content-type"]}, not JSON`);
        }
        return decodeExport(JSON.parse(request.body));
      }),
    close: () => receiver.close(),
  };
}

function decodeExport(body: {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
      }[];
    }[];
  }[];
}): ExportedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        scope: scopeSpans.scope?.name ?? "",
        resourceService: String(resource["service.name"] ?? ""),
        resource,
        attributes: attributesOf(span.attributes),
      })),
    );
  });
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    attributes[key] =
      value.stringValue ??
      value.boolValue ??
      value.doubleValue ??
      (value.intValue === undefined ? "" : Number(value.intValue));
  }
  return attributes;
}
