import { describe, expect, it } from "vitest";
import {
  oldHttpAttributes,
  parseResourceAttributes,
  parseStabilityOptIn,
  resourceAttributes,
  rpcAttributes,
  rpcErrorAttributes,
} from "./semconv.js";

describe("OTEL_RESOURCE_ATTRIBUTES", () => {
  it("is key=value pairs separated by commas, spaces around them ignored, keys and values percent-decoded", () => {
    expect(
      parseResourceAttributes(" deployment.environment.name = prod ,team=eval%20ops,k%3Dx=a%2Cb,,empty="),
    ).toEqual({ "deployment.environment.name": "prod", team: "eval ops", "k=x": "a,b", empty: "" });
    expect(parseResourceAttributes(undefined)).toEqual({});
    expect(parseResourceAttributes("  ")).toEqual({});
  });

  it("is refused whole when an entry has no `=`, an empty key or a bad escape", () => {
    expect(parseResourceAttributes("a=1,b")).toBeNull();
    expect(parseResourceAttributes("=1")).toBeNull();
    expect(parseResourceAttributes("a=%E0%A4%A")).toBeNull();
  });
});

describe("the resource", () => {
  it("merges OTEL_RESOURCE_ATTRIBUTES and the pod's names under service.name", () => {
    const resource = resourceAttributes(
      {
        OTEL_RESOURCE_ATTRIBUTES: "service.name=other,deployment.environment.name=prod,k8s.pod.name=stale",
        K8S_POD_NAME: "control-7d9f-abc",
        K8S_NAMESPACE_NAME: "evalp",
        K8S_NODE_NAME: "node-1",
      },
      "control",
      "1.2.3",
    );
    expect(resource).toEqual({
      "service.name": "control",
      "service.version": "1.2.3",
      "service.instance.id": expect.stringMatching(/^[0-9a-f-]{36}$/),
      "deployment.environment.name": "prod",
      "k8s.pod.name": "control-7d9f-abc",
      "k8s.namespace.name": "evalp",
      "k8s.node.name": "node-1",
    });
  });

  it("takes OTEL_SERVICE_NAME, and service.version or service.instance.id where OTEL_RESOURCE_ATTRIBUTES names them", () => {
    const resource = resourceAttributes(
      {
        OTEL_SERVICE_NAME: "evalp-control",
        OTEL_RESOURCE_ATTRIBUTES: "service.version=9,service.instance.id=i-1",
      },
      "control",
      "1.2.3",
    );
    expect(resource).toMatchObject({
      "service.name": "evalp-control",
      "service.version": "9",
      "service.instance.id": "i-1",
    });
    expect(resource).not.toHaveProperty("k8s.pod.name");
  });

  it("gives each process an instance id of its own", () => {
    const first = resourceAttributes({}, "control", "1");
    const second = resourceAttributes({}, "control", "1");
    expect(first["service.instance.id"]).not.toBe(second["service.instance.id"]);
  });
});

describe("OTEL_SEMCONV_STABILITY_OPT_IN", () => {
  it("defaults to the current names only; http/dup and rpc/dup add the older ones", () => {
    expect(parseStabilityOptIn(undefined)).toEqual({
      http: { current: true, old: false },
      rpc: { current: true, old: false },
    });
    expect(parseStabilityOptIn("http")).toMatchObject({ http: { old: false } });
    expect(parseStabilityOptIn(" database , HTTP/dup")).toEqual({
      http: { current: true, old: true },
      rpc: { current: true, old: false },
    });
    expect(parseStabilityOptIn("rpc/dup")).toMatchObject({ rpc: { old: true }, http: { old: false } });
  });
});

describe("RPC attributes", () => {
  const call = {
    service: "evalp.control.v1.ControlService",
    method: "GetApp",
    url: "http://control.evalp.svc:8081",
  };

  it("name the system connectrpc, the fully qualified method and the server called", () => {
    expect(rpcAttributes(call, { current: true, old: false })).toEqual({
      "rpc.system.name": "connectrpc",
      "rpc.method": "evalp.control.v1.ControlService/GetApp",
      "server.address": "control.evalp.svc",
      "server.port": 8081,
    });
    expect(rpcErrorAttributes("not_found", { current: true, old: false })).toEqual({
      "rpc.status_code": "not_found",
      "error.type": "not_found",
    });
  });

  it("carry the older names too under rpc/dup", () => {
    expect(rpcAttributes(call, { current: true, old: true })).toMatchObject({
      "rpc.system.name": "connectrpc",
      "rpc.system": "connect_rpc",
      "rpc.service": "evalp.control.v1.ControlService",
    });
    expect(rpcErrorAttributes("not_found", { current: true, old: true })).toMatchObject({
      "rpc.connect_rpc.error_code": "not_found",
    });
  });
});

describe("older HTTP names (http/dup)", () => {
  it("are copied from the current ones, server and client apart", () => {
    const current = {
      "http.request.method": "POST",
      "http.response.status_code": 201,
      "url.path": "/v1/apps",
      "url.query": "a=1",
      "url.scheme": "http",
      "server.address": "api.example.com",
      "server.port": 443,
    };
    expect(oldHttpAttributes(current, true)).toEqual({
      "http.method": "POST",
      "http.status_code": 201,
      "http.target": "/v1/apps?a=1",
      "http.scheme": "http",
      "net.host.name": "api.example.com",
      "net.host.port": 443,
    });
    expect(oldHttpAttributes(current, false)).toMatchObject({
      "net.peer.name": "api.example.com",
      "net.peer.port": 443,
    });
  });

  it("are none for a span that is not HTTP", () => {
    expect(oldHttpAttributes({ "rpc.method": "a/b" }, true)).toEqual({});
  });
});
