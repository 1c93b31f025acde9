import { describe, expect, it } from "vitest";
import { grants, ROLE_SCOPES, SCOPES } from "./scopes.js";

describe("grants", () => {
  it("grants a scope by itself, X:read by X:write, org:read by org:admin", () => {
    expect(grants(["apps:write"], "apps:write")).toBe(true);
    expect(grants(["webhooks:write"], "webhooks:read")).toBe(true);
    expect(grants(["evaluations:write"], "evaluations:read")).toBe(true);
    expect(grants(["org:admin"], "org:read")).toBe(true);
    expect(grants(["bundles:write"], "bundles:read")).toBe(true);
  });

  it("does not grant upwards or sideways", () => {
    expect(grants(["webhooks:read"], "webhooks:write")).toBe(false);
    expect(grants(["org:read"], "org:admin")).toBe(false);
    expect(grants(["apps:write"], "keys:write")).toBe(false);
    expect(grants(["audit:read"], "analytics:read")).toBe(false);
    expect(grants([], "org:read")).toBe(false);
  });
});

describe("ROLE_SCOPES", () => {
  it("gives owners and admins every scope", () => {
    expect([...ROLE_SCOPES.owner]).toEqual([...SCOPES]);
    expect([...ROLE_SCOPES.admin]).toEqual([...SCOPES]);
  });

  it("gives members all but org:admin, keys:write and quotas:write, and viewers the :read ones", () => {
    expect(ROLE_SCOPES.member).not.toContain("org:admin");
    expect(ROLE_SCOPES.member).not.toContain("keys:write");
    expect(ROLE_SCOPES.member).not.toContain("quotas:write");
    expect(ROLE_SCOPES.member).toContain("apps:write");
    expect(ROLE_SCOPES.member).toHaveLength(SCOPES.length - 3);
    expect([...ROLE_SCOPES.viewer].sort()).toEqual(
      [
        "org:read",
        "bundles:read",
        "webhooks:read",
        "evaluations:read",
        "analytics:read",
        "audit:read",
        "subjects:read",
      ].sort(),
    );
  });
});
