import {
  create,
  type DescFile,
  type DescService,
  fromBinary,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  ServerReflection,
  type ServerReflectionRequest,
  ServerReflectionRequestSchema,
  type ServerReflectionResponse,
  ServerReflectionResponseSchema,
} from "@evalp/proto/grpc/reflection/v1/reflection";
import * as v1alpha from "@evalp/proto/grpc/reflection/v1alpha/reflection";

/** What reflection knows: the files of the services served, by name and by the symbols they define. */
type Index = {
  services: string[];
  files: Map<string, DescFile>;
  symbols: Map<string, DescFile>;
  /** `<message type>:<number>` of each extension. */
  extensions: Map<string, DescFile>;
  /** The extension numbers of each extended message type. */
  extensionNumbers: Map<string, number[]>;
};

/** Indexes the files that define the services and the extra files, and every file they import. */
function indexOf(services: readonly DescService[], extra: readonly DescFile[]): Index {
  const index: Index = {
    services: services.map((service) => service.typeName).sort(),
    files: new Map(),
    symbols: new Map(),
    extensions: new Map(),
    extensionNumbers: new Map(),
  };
  const add = (file: DescFile) => {
    if (index.files.has(file.proto.name)) return;
    index.files.set(file.proto.name, file);
    for (const type of nestedTypes(file)) {
      index.symbols.set(type.typeName, file);
      switch (type.kind) {
        case "service":
          for (const method of type.methods) index.symbols.set(`${type.typeName}.${method.name}`, file);
          break;
        case "message":
          for (const field of type.fields) index.symbols.set(`${type.typeName}.${field.name}`, file);
          for (const oneof of type.oneofs) index.symbols.set(`${type.typeName}.${oneof.name}`, file);
          break;
        case "enum": {
          // Enum values are scoped as siblings of their enum, as in C++.
          const scope = type.typeName.slice(0, type.typeName.length - type.name.length);
          for (const value of type.values) index.symbols.set(`${scope}${value.name}`, file);
          break;
        }
        case "extension": {
          const extendee = type.extendee.typeName;
          index.extensions.set(`${extendee}:${type.number}`, file);
          index.extensionNumbers.set(extendee, [
            ...(index.extensionNumbers.get(extendee) ?? []),
            type.number,
          ]);
          break;
        }
      }
    }
    for (const dependency of file.dependencies) add(dependency);
  };
  for (const service of services) add(service.file);
  for (const file of extra) add(file);
  return index;
}

/** gRPC's NOT_FOUND, as reflection's error responses carry it. */
const NOT_FOUND = 5;

/**
 * Answers the requests of one reflection stream. Like the reference implementations, a file
 * comes with the files it imports, each sent once per stream: a client builds its descriptor
 * pool from what it was sent.
 */
function answerer(index: () => Index): (request: ServerReflectionRequest) => ServerReflectionResponse {
  const sent = new Set<string>();
  const withImports = (file: DescFile): Uint8Array[] => {
    const files: Uint8Array[] = [];
    const visit = (each: DescFile) => {
      if (sent.has(each.proto.name)) return;
      sent.add(each.proto.name);
      files.push(toBinary(FileDescriptorProtoSchema, each.proto));
      for (const dependency of each.dependencies) visit(dependency);
    };
    visit(file);
    return files;
  };
  return (request) => {
    const response = (
      messageResponse: MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"],
    ) =>
      create(ServerReflectionResponseSchema, {
        validHost: request.host,
        originalRequest: request,
        messageResponse,
      });
    const files = (file: DescFile | undefined, what: string) =>
      file
        ? response({ case: "fileDescriptorResponse", value: { fileDescriptorProto: withImports(file) } })
        : response({
            case: "errorResponse",
            value: { errorCode: NOT_FOUND, errorMessage: `${what} not found` },
          });
    const { services, files: byName, symbols, extensions, extensionNumbers } = index();
    const asked = request.messageRequest;
    switch (asked.case) {
      case "listServices":
        return response({
          case: "listServicesResponse",
          value: { service: services.map((name) => ({ name })) },
        });
      case "fileByFilename":
        return files(byName.get(asked.value), `file ${asked.value}`);
      case "fileContainingSymbol":
        return files(symbols.get(asked.value), `symbol ${asked.value}`);
      case "fileContainingExtension": {
        const { containingType, extensionNumber } = asked.value;
        return files(
          extensions.get(`${containingType}:${extensionNumber}`),
          `extension ${extensionNumber} of ${containingType}`,
        );
      }
      case "allExtensionNumbersOfType": {
        if (!symbols.has(asked.value)) return files(undefined, `type ${asked.value}`);
        return response({
          case: "allExtensionNumbersResponse",
          value: { baseTypeName: asked.value, extensionNumber: extensionNumbers.get(asked.value) ?? [] },
        });
      }
      default:
        throw new ConnectError("a reflection request must ask for something", Code.InvalidArgument);
    }
  };
}

/**
 * Serves gRPC server reflection, `grpc.reflection.v1.ServerReflection` and its older
 * `v1alpha` twin (the same messages), from the descriptors the services were generated with:
 * `grpcurl` and `buf curl` list the services and describe or call their methods without the
 * .proto files. `services` is read at the first call, once every route is registered; `extra`
 * are files no service imports that clients need all the same (the error detail every error
 * carries, which a client resolves by its type name to decode it).
 *
 * Unlike health, reflection passes the service token check like any RPC: the schema is no
 * secret (it is the repository's proto/), but whoever can use what it describes needs a token
 * anyway, so an open reflection would serve only those who may call nothing.
 */
export function serveGrpcReflection(
  router: ConnectRouter,
  services: () => readonly DescService[],
  extra: readonly DescFile[] = [],
): void {
  let index: Index | null = null;
  const indexed = () => {
    index ??= indexOf(services(), extra);
    return index;
  };
  router.service(ServerReflection, {
    async *serverReflectionInfo(requests) {
      const answer = answerer(indexed);
      for await (const request of requests) yield answer(request);
    },
  });
  // v1alpha's messages are v1's under another package: the same bytes on the wire.
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      const answer = answerer(indexed);
      for await (const request of requests) {
        const asked = fromBinary(
          ServerReflectionRequestSchema,
          toBinary(v1alpha.ServerReflectionRequestSchema, request),
        );
        yield fromBinary(
          v1alpha.ServerReflectionResponseSchema,
          toBinary(ServerReflectionResponseSchema, answer(asked)),
        );
      }
    },
  });
}
