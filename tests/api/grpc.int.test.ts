import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import {
  AnySchema,
  anyUnpack,
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { createControl } from "@evalp/control";
import {
  createLogger,
  LIVENESS_SERVICE,
  mintServiceToken,
  PLANES,
  type Plane,
  serviceSigningKey,
} from "@evalp/kit";
import { ErrorDetailSchema } from "@evalp/proto/common/v1/error";
import * as grpc from "@grpc/grpc-js";
import { loadFileDescriptorSetFromBuffer, loadSync, type Options } from "@grpc/proto-loader";
import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, type Tenant } from "./support/fixtures.js";
import { createTemplate } from "./support/platform.js";
import { type Stack, useStack } from "./support/stack.js";

// `@grpc/grpc-js` is the client a gRPC-only peer of the platform would use: every plane answers
// it over the gRPC protocol on its RPC port, beside Connect. Health (grpc.health.v1, what
// Kubernetes' `grpc:` probes ask) answers without a token; reflection and every RPC need the
// cluster's service token, as every call between the planes does.
const context = useStack();
let stack: Stack;
let tenant: Tenant;
/** Per plane, a token of the gateway's and one of control's (the only caller of UsageService). */
let tokens: Record<Plane, { gateway: string; control: string }>;
/** The token a call to `service` on `plane` is sent with: its caller's, as its table grants it. */
const tokenOf = (plane: Plane, service = "") =>
  tokens[plane][service === "evalp.common.v1.UsageService" ? "control" : "gateway"];

const PROTO = fileURLToPath(new URL("../../proto", import.meta.url));
// What a grpc-js peer typically asks of proto-loader: the names of the .proto, 64-bit integers
// as strings, enums by name, oneofs told which case is set.
const LOAD: Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/** The standard protocols' stubs, from the wire interfaces' .proto files as a peer has them. */
const standard = grpc.loadPackageDefinition(
  loadSync(
    [
      "grpc/health/v1/health.proto",
      "grpc/reflection/v1/reflection.proto",
      "grpc/reflection/v1alpha/reflection.proto",
    ],
    { ...LOAD, includeDirs: [PROTO] },
  ),
);

const URL_OF: Record<Plane, "CONTROL_URL" | "PLATFORM_URL" | "INTERVIEW_URL" | "WEBHOOKS_URL"> = {
  control: "CONTROL_URL",
  platform: "PLATFORM_URL",
  interview: "INTERVIEW_URL",
  webhooks: "WEBHOOKS_URL",
};

/** host:port of a plane's RPC port. */
const target = (plane: Plane) => new URL(stack.config[URL_OF[plane]]).host;

type Callback = (error: grpc.ServiceError | null, response?: unknown) => void;
type UnaryStub = (
  request: object,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: Callback,
) => unknown;
type StreamStub = (metadata: grpc.Metadata) => grpc.ClientDuplexStream<object, Record<string, unknown>>;

/** The client constructor of a fully qualified service name in loaded descriptors. */
function clientOf(root: grpc.GrpcObject, service: string, plane: Plane): grpc.Client {
  const found = service
    .split(".")
    .reduce<unknown>((at, part) => (at as grpc.GrpcObject | undefined)?.[part], root);
  if (typeof found !== "function") throw new Error(`${service} is not in the descriptors`);
  const Client = found as grpc.ServiceClientConstructor;
  return new Client(target(plane), grpc.credentials.createInsecure());
}

const withToken = (value: string | null) => {
  const metadata = new grpc.Metadata();
  if (value) metadata.set("authorization", `Bearer ${value}`);
  return metadata;
};

/** One unary call; resolves with the response, rejects with the grpc-js ServiceError. */
function unary(
  client: grpc.Client,
  method: string,
  request: object,
  metadata = withToken(null),
): Promise<any> {
  const stub = (client as unknown as Record<string, UnaryStub>)[method];
  if (!stub) throw new Error(`no method ${method}`);
  return new Promise((resolve, reject) => {
    stub.call(client, request, metadata, { deadline: Date.now() + 10_000 }, (error, response) =>
      error ? reject(error) : resolve(response),
    );
  });
}

/** Sends reflection requests on one stream and collects its responses. */
function reflect(client: grpc.Client, requests: object[], metadata: grpc.Metadata): Promise<any[]> {
  const open = (client as unknown as Record<string, StreamStub>).ServerReflectionInfo;
  if (!open) throw new Error("no ServerReflectionInfo");
  return new Promise((resolve, reject) => {
    const call = open.call(client, metadata);
    const responses: unknown[] = [];
    call.on("data", (response) => responses.push(response));
    call.on("error", reject);
    call.on("end", () => resolve(responses));
    for (const request of requests) call.write(request);
    call.end();
  });
}

const reflectionOf = (plane: Plane, version: "v1" | "v1alpha" = "v1") =>
  clientOf(standard, `grpc.reflection.${version}.ServerReflection`, plane);

/** Every file a plane's services are defined in (and their imports), as reflection sends them. */
async function descriptorsOf(plane: Plane): Promise<{ services: string[]; files: FileDescriptorProto[] }> {
  const client = reflectionOf(plane);
  try {
    const [listed] = await reflect(client, [{ list_services: "" }], withToken(tokenOf(plane)));
    const services = (listed.list_services_response.service as { name: string }[]).map(
      (service) => service.name,
    );
    // The services' files, and the error detail's that every error carries.
    const answers = await reflect(
      client,
      [...services, "evalp.common.v1.ErrorDetail"].map((name) => ({ file_containing_symbol: name })),
      withToken(tokenOf(plane)),
    );
    const files = answers.flatMap((answer) =>
      (answer.file_descriptor_response.file_descriptor_proto as Buffer[]).map((bytes) =>
        fromBinary(FileDescriptorProtoSchema, bytes),
      ),
    );
    return { services, files };
  } finally {
    client.close();
  }
}

/** grpc-js stubs built from what reflection sent, as grpcurl does: no .proto file needed. */
function stubsOf(files: FileDescriptorProto[]): grpc.GrpcObject {
  const set = toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file: files }));
  return grpc.loadPackageDefinition(loadFileDescriptorSetFromBuffer(Buffer.from(set), LOAD));
}

/**
 * The evalp.common.v1.ErrorDetail of a gRPC error, decoded from its `grpc-status-details-bin`
 * trailer (a google.rpc.Status: code 1, message 2, details 3 as google.protobuf.Any).
 */
function errorDetail(error: grpc.ServiceError) {
  const [bin] = error.metadata.get("grpc-status-details-bin");
  if (!Buffer.isBuffer(bin)) throw new Error("no grpc-status-details-bin trailer");
  const reader = new BinaryReader(bin);
  const status = { code: 0, details: [] as Uint8Array[] };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1) status.code = reader.int32();
    else if (field === 3) status.details.push(reader.bytes());
    else reader.skip(wireType);
  }
  const details = status.details.map((bytes) => anyUnpack(fromBinary(AnySchema, bytes), ErrorDetailSchema));
  return { code: status.code, detail: details.find((detail) => detail !== undefined) };
}

/**
 * A map field as an object. Stubs built from descriptors (protobufjs's ext/descriptor) read a
 * map as its repeated entries, though the descriptor marks them `map_entry`; from .proto files
 * it is an object.
 */
function entries(map: Record<string, unknown> | { key: string; value: unknown }[]): Record<string, unknown> {
  return Array.isArray(map) ? Object.fromEntries(map.map(({ key, value }) => [key, value])) : map;
}

beforeAll(async () => {
  ({ stack } = context);
  tenant = await createTenant(context.api);
  const as = (name: string) => ({ name, key: serviceSigningKey(stack.config, name) });
  const pairs = await Promise.all(
    PLANES.map(async (plane) => [
      plane,
      {
        gateway: await mintServiceToken(as("gateway"), plane),
        control: await mintServiceToken(as("control"), plane),
      },
    ]),
  );
  tokens = Object.fromEntries(pairs) as typeof tokens;
});

/** One real RPC of each plane and one of its errors, over gRPC with a service token. */
const CALLS: Record<
  Plane,
  {
    call: () => Promise<{
      service: string;
      method: string;
      request: object;
      expect: (response: any) => void;
    }>;
    error: () => { service: string; method: string; request: object; status: grpc.status; code: string };
  }
> = {
  control: {
    call: async () => ({
      service: "evalp.control.v1.QuotaService",
      method: "GetLimits",
      request: { environment_id: tenant.environmentId },
      expect: (response) => expect(Number(response.limits.webhook_endpoints)).toBeGreaterThan(0),
    }),
    error: () => ({
      service: "evalp.control.v1.QuotaService",
      method: "GetLimits",
      request: { environment_id: "not-an-id" },
      status: grpc.status.NOT_FOUND,
      code: "not_found",
    }),
  },
  platform: {
    call: async () => {
      const { template } = await createTemplate(context.api, tenant);
      return {
        service: "evalp.platform.v1.TemplateService",
        method: "GetTemplate",
        request: {
          app: { organization_id: tenant.organizationId, app_id: tenant.appId },
          template_id: template.id,
        },
        expect: (response) => {
          expect(response.template.id).toBe(template.id);
          expect(response.template.name).toBe("Graduate intake");
          expect(response.template.definitions).toHaveLength(6);
        },
      };
    },
    error: () => ({
      service: "evalp.platform.v1.TemplateService",
      method: "GetTemplate",
      request: {
        app: { organization_id: tenant.organizationId, app_id: tenant.appId },
        template_id: "00000000-0000-4000-8000-000000000000",
      },
      status: grpc.status.NOT_FOUND,
      code: "not_found",
    }),
  },
  interview: {
    call: async () => ({
      service: "evalp.common.v1.UsageService",
      method: "CountUsage",
      request: { environment_id: tenant.environmentId },
      expect: (response) =>
        expect(entries(response.usage)).toMatchObject({ evaluations: "0", active_participant_sessions: "0" }),
    }),
    error: () => ({
      service: "evalp.interview.v1.EvaluationService",
      method: "GetEvaluation",
      request: {
        environment: {
          organization_id: tenant.organizationId,
          app_id: tenant.appId,
          environment_id: tenant.environmentId,
        },
        evaluation_id: "00000000-0000-4000-8000-000000000000",
      },
      status: grpc.status.NOT_FOUND,
      code: "not_found",
    }),
  },
  webhooks: {
    call: async () => ({
      service: "evalp.common.v1.UsageService",
      method: "CountUsage",
      request: { environment_id: tenant.environmentId },
      expect: (response) => expect(entries(response.usage)).toMatchObject({ webhook_endpoints: "0" }),
    }),
    error: () => ({
      service: "evalp.webhooks.v1.WebhookEndpointService",
      method: "GetEndpoint",
      request: {
        environment: {
          organization_id: tenant.organizationId,
          app_id: tenant.appId,
          environment_id: tenant.environmentId,
        },
        endpoint_id: "00000000-0000-4000-8000-000000000000",
      },
      status: grpc.status.NOT_FOUND,
      code: "not_found",
    }),
  },
};

describe.each(PLANES)("the %s plane over gRPC, to a @grpc/grpc-js client", (plane) => {
  it("answers grpc.health.v1.Health without a token: SERVING for the server, each service and liveness", async () => {
    const health = clientOf(standard, "grpc.health.v1.Health", plane);
    try {
      const { services } = await descriptorsOf(plane);
      for (const service of ["", LIVENESS_SERVICE, ...services]) {
        expect(await unary(health, "Check", { service }), service).toEqual({ status: "SERVING" });
      }
      const unknown = await unary(health, "Check", { service: "evalp.nothing.v1.NoService" }).catch((e) => e);
      expect(unknown.code).toBe(grpc.status.NOT_FOUND);
      // Watch sends the status at once, and goes on until the caller cancels.
      const watch = (health as unknown as Record<string, (r: object) => grpc.ClientReadableStream<object>>)
        .Watch;
      const stream = watch?.call(health, { service: "" });
      const first = await new Promise((resolve, reject) => {
        stream?.once("data", resolve);
        stream?.once("error", reject);
      });
      expect(first).toEqual({ status: "SERVING" });
      stream?.on("error", () => undefined);
      stream?.cancel();
    } finally {
      health.close();
    }
  });

  it("lists its services over reflection (v1 and v1alpha) and sends descriptors a client decodes and calls with", async () => {
    const { services, files } = await descriptorsOf(plane);
    expect(services).toEqual(
      expect.arrayContaining(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]),
    );
    const own = services.filter((name) => name.startsWith(`evalp.${plane}.v1.`));
    expect(own.length, services.join()).toBeGreaterThan(0);
    // Each file once, with everything it imports (google/protobuf's too).
    const names = files.map((file) => file.name);
    expect(new Set(names).size).toBe(names.length);
    for (const file of files) for (const dependency of file.dependency) expect(names).toContain(dependency);
    expect(names).toEqual(
      expect.arrayContaining(["evalp/common/v1/error.proto", "google/protobuf/struct.proto"]),
    );
    // The older v1alpha answers the same, for the clients that still ask it.
    const alpha = reflectionOf(plane, "v1alpha");
    try {
      const [listed] = await reflect(alpha, [{ list_services: "" }], withToken(tokenOf(plane)));
      expect(listed.list_services_response.service.map((s: { name: string }) => s.name)).toEqual(services);
      const [missing] = await reflect(
        alpha,
        [{ file_by_filename: "evalp/nothing.proto" }],
        withToken(tokenOf(plane)),
      );
      expect(missing.error_response.error_code).toBe(grpc.status.NOT_FOUND);
    } finally {
      alpha.close();
    }
    // A real RPC of the plane, through stubs built from those descriptors alone.
    const call = await CALLS[plane].call();
    const client = clientOf(stubsOf(files), call.service, plane);
    try {
      call.expect(await unary(client, call.method, call.request, withToken(tokenOf(plane, call.service))));
    } finally {
      client.close();
    }
  });

  it("answers an error with its gRPC status and the contract's detail", async () => {
    const { files } = await descriptorsOf(plane);
    const failing = CALLS[plane].error();
    const client = clientOf(stubsOf(files), failing.service, plane);
    try {
      const error: grpc.ServiceError = await unary(
        client,
        failing.method,
        failing.request,
        withToken(tokenOf(plane, failing.service)),
      ).then(
        () => {
          throw new Error("expected an error");
        },
        (caught) => caught,
      );
      expect(error.code).toBe(failing.status);
      const { code, detail } = errorDetail(error);
      expect(code).toBe(failing.status);
      expect(detail?.code).toBe(failing.code);
    } finally {
      client.close();
    }
  });

  it("refuses every method but Health's without a service token", async () => {
    const { services, files } = await descriptorsOf(plane);
    const client = new grpc.Client(target(plane), grpc.credentials.createInsecure());
    const empty = Buffer.alloc(0);
    const pass = (value: Buffer) => value;
    // Each call sends an empty message (a valid one of any type) and waits for its status.
    const statusOf = (path: string, streaming: boolean) =>
      new Promise<grpc.status>((resolve) => {
        const options = { deadline: Date.now() + 10_000 };
        if (!streaming) {
          const call = client.makeUnaryRequest(path, pass, pass, empty, withToken(null), options, () => {});
          call.on("status", (status: grpc.StatusObject) => resolve(status.code));
          return;
        }
        const call = client.makeBidiStreamRequest(path, pass, pass, withToken(null), options);
        call.on("status", (status: grpc.StatusObject) => resolve(status.code));
        call.on("data", () => call.cancel());
        call.on("error", () => undefined);
        call.write(empty);
        call.end();
      });
    const answered: Record<string, grpc.status> = {};
    try {
      for (const file of files) {
        // The files imported also define services served elsewhere (control's, for its refs).
        for (const service of file.service.filter((each) =>
          services.includes(`${file.package}.${each.name}`),
        )) {
          for (const method of service.method) {
            const path = `/${file.package}.${service.name}/${method.name}`;
            answered[path] = await statusOf(path, method.clientStreaming || method.serverStreaming);
          }
        }
      }
    } finally {
      client.close();
    }
    const paths = Object.keys(answered);
    expect(paths).toEqual(
      expect.arrayContaining(["/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"]),
    );
    expect(paths.length).toBeGreaterThan(5);
    for (const [path, code] of Object.entries(answered)) {
      if (path.startsWith("/grpc.health.v1.Health/")) {
        // Check answers; Watch answers too and is cancelled after its first status.
        expect([grpc.status.OK, grpc.status.CANCELLED], path).toContain(code);
      } else {
        expect(code, path).toBe(grpc.status.UNAUTHENTICATED);
      }
    }
  });
});

describe("gRPC health of a process whose dependency is down", () => {
  it("is NOT_SERVING for the server and its services while liveness stays SERVING; Watch ends when it closes", async () => {
    const control = await createControl(
      { ...stack.config, DATABASE_URL: "postgres://evalp@127.0.0.1:1/unreachable", RETENTION_ENABLED: false },
      createLogger("grpc-test", "silent"),
      { ports: { port: 0, opsPort: 0 } },
    );
    const { port } = await control.listen();
    const Health = (standard.grpc as grpc.GrpcObject).health as grpc.GrpcObject;
    const Client = (Health.v1 as grpc.GrpcObject).Health as grpc.ServiceClientConstructor;
    const health = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      expect(await unary(health, "Check", { service: "" })).toEqual({ status: "NOT_SERVING" });
      expect(await unary(health, "Check", { service: "evalp.control.v1.QuotaService" })).toEqual({
        status: "NOT_SERVING",
      });
      expect(await unary(health, "Check", { service: LIVENESS_SERVICE })).toEqual({ status: "SERVING" });
      const watch = (health as unknown as Record<string, (r: object) => grpc.ClientReadableStream<object>>)
        .Watch;
      const stream = watch?.call(health, { service: "" });
      const seen: unknown[] = [];
      const ended = new Promise<grpc.StatusObject>((resolve) => {
        stream?.on("data", (response) => {
          seen.push(response);
          // Closing the process ends the stream (a server draining does not wait on watchers).
          if (seen.length === 1) void control.shutdown.shutdown("test over");
        });
        stream?.on("error", () => undefined);
        stream?.on("status", resolve);
      });
      expect((await ended).code).toBe(grpc.status.OK);
      expect(seen).toEqual([{ status: "NOT_SERVING" }]);
    } finally {
      health.close();
      await control.shutdown.shutdown("test over");
    }
  });
});

describe("the service token for grpcurl (scripts/service-token.mjs)", () => {
  it("prints a token the planes accept for reflection", async () => {
    const script = fileURLToPath(new URL("../../scripts/service-token.mjs", import.meta.url));
    // An operator borrows a process's key (here the gateway's, mounted from its Secret).
    const { stdout } = await promisify(execFile)(process.execPath, [script, "control"], {
      env: {
        ...process.env,
        SERVICE_KEY: stack.keys.private.gateway,
        SERVICE_PUBLIC_KEYS: stack.keys.public,
      },
    });
    const client = reflectionOf("control");
    try {
      const [listed] = await reflect(client, [{ list_services: "" }], withToken(stdout.trim()));
      expect(listed.list_services_response.service.length).toBeGreaterThan(5);
      await expect(reflect(client, [{ list_services: "" }], withToken(null))).rejects.toMatchObject({
        code: grpc.status.UNAUTHENTICATED,
      });
    } finally {
      client.close();
    }
  });
});
