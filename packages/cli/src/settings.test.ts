import { describe, expect, it } from "vitest";
import { CliError } from "./errors.js";
import { DEFAULT_URL, requireCredential, requireIds, resolveSettings } from "./settings.js";

describe("resolveSettings", () => {
  it("takes each setting from the command line, then the environment, then the file", () => {
    const file = { url: "http://file", org: "org-file", app: "app-file", env: "env-file" };
    const env = { EVALP_URL: "http://env/", EVALP_ORG: "org-env", EVALP_APP: "app-env" };
    const settings = resolveSettings({ org: "org-flag" }, env, file);
    expect(settings).toMatchObject({ url: "http://env", org: "org-flag", app: "app-env", env: "env-file" });
    expect(resolveSettings({}, {}, {}).url).toBe(DEFAULT_URL);
  });

  it("prefers a credential of the environment to the file's, and an API key to a token", () => {
    const file = { token: "evs_file", api_key: "evk_file" };
    expect(resolveSettings({}, {}, file).credential).toMatchObject({ kind: "api_key", value: "evk_file" });
    expect(resolveSettings({}, {}, { token: "evs_file" }).credential).toMatchObject({ kind: "token" });
    expect(resolveSettings({}, { EVALP_TOKEN: "evs_env" }, file).credential).toEqual({
      kind: "token",
      value: "evs_env",
      source: "EVALP_TOKEN",
    });
    expect(
      resolveSettings({}, { EVALP_TOKEN: "t", EVALP_API_KEY: "evk_env" }, file).credential,
    ).toMatchObject({
      kind: "api_key",
      value: "evk_env",
    });
  });
});

describe("requireIds", () => {
  it("answers the ids asked for", () => {
    const settings = resolveSettings({ org: "o", app: "a", env: "e" }, {}, {});
    expect(requireIds(settings, "org", "app", "env")).toEqual({ org: "o", app: "a", env: "e" });
  });

  it("fails as a usage error naming the flag and the variable of the first missing id", () => {
    const settings = resolveSettings({ org: "o" }, {}, {});
    let error: CliError | undefined;
    try {
      requireIds(settings, "org", "app");
    } catch (caught) {
      error = caught as CliError;
    }
    expect(error).toBeInstanceOf(CliError);
    expect(error?.exitCode).toBe(2);
    expect(error?.message).toContain("--app");
    expect(error?.message).toContain("EVALP_APP");
  });
});

describe("requireCredential", () => {
  it("says how to log in when there is no credential", () => {
    expect(() => requireCredential(resolveSettings({}, {}, {}))).toThrow(/evalp login/);
  });
});
