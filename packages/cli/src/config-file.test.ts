import { chmod, mkdir, mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  configPath,
  readConfig,
  readConfigDocument,
  updateConfig,
  writeConfig,
  writeConfigDocument,
} from "./config-file.js";
import { CliError } from "./errors.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "evalp-config-"));
});

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe("configPath", () => {
  it("takes EVALP_CONFIG, else XDG_CONFIG_HOME, else ~/.config", () => {
    expect(configPath({ EVALP_CONFIG: "/a/b.json", XDG_CONFIG_HOME: "/x" }, "/home/u")).toBe("/a/b.json");
    expect(configPath({ XDG_CONFIG_HOME: "/x" }, "/home/u")).toBe("/x/evalp/config.json");
    expect(configPath({}, "/home/u")).toBe("/home/u/.config/evalp/config.json");
    expect(configPath({ XDG_CONFIG_HOME: "" }, "/home/u")).toBe("/home/u/.config/evalp/config.json");
  });
});

describe("writeConfig", () => {
  it("writes the file 0600 in a folder it creates 0700", async () => {
    const path = join(dir, "evalp", "config.json");
    await writeConfig(path, { url: "http://api", token: "evs_secret" });
    expect(await modeOf(path)).toBe(0o600);
    expect(await modeOf(join(dir, "evalp"))).toBe(0o700);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ url: "http://api", token: "evs_secret" });
  });

  it("replaces a file of looser rights with one of 0600, leaving an existing folder's rights alone", async () => {
    const path = join(dir, "config.json");
    await writeFile(path, "{}", { mode: 0o644 });
    await chmod(dir, 0o755);
    await writeConfig(path, { org: "o" });
    expect(await modeOf(path)).toBe(0o600);
    expect(await modeOf(dir)).toBe(0o755);
  });
});

describe("readConfig", () => {
  it("answers {} when there is no file", async () => {
    expect(await readConfig(join(dir, "absent.json"))).toEqual({});
  });

  it("reads what writeConfig wrote", async () => {
    const path = join(dir, "config.json");
    await writeConfig(path, { url: "http://api", api_key: "evk_x", org: "o", app: "a", env: "e" });
    expect(await readConfig(path)).toEqual({
      url: "http://api",
      api_key: "evk_x",
      org: "o",
      app: "a",
      env: "e",
    });
  });

  it.each([0o640, 0o604, 0o660, 0o606, 0o620])(
    "refuses a file of mode %o, saying to chmod 600 it",
    async (mode) => {
      const path = join(dir, "config.json");
      await writeFile(path, JSON.stringify({ token: "evs_secret" }));
      await chmod(path, mode);
      const error = await readConfig(path).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).code).toBe("config_insecure");
      expect((error as CliError).message).toContain(`chmod 600 ${path}`);
      expect((error as CliError).message).not.toContain("evs_secret");
      expect((error as CliError).message).not.toContain("\n");
    },
  );

  it("refuses a file that is not a JSON object of known string fields", async () => {
    const path = join(dir, "config.json");
    for (const text of ["{not json", "[]", '{"token": 5}', '{"tokn": "x"}']) {
      await writeFile(path, text, { mode: 0o600 });
      await expect(readConfig(path)).rejects.toMatchObject({ code: "config_invalid" });
    }
  });
});

describe("updateConfig", () => {
  it("keeps the other fields and removes the ones set to undefined", async () => {
    const path = join(dir, "nested", "deeper", "config.json");
    await mkdir(join(dir, "nested"), { mode: 0o700 });
    await writeConfig(path, {
      url: "http://api",
      token: "t",
      token_expires_at: "2026-01-01T00:00:00.000Z",
      org: "o",
    });
    const next = await updateConfig(path, { token: undefined, token_expires_at: undefined, app: "a" });
    expect(next).toEqual({ url: "http://api", org: "o", app: "a" });
    expect(await readConfig(path)).toEqual(next);
    expect(await modeOf(join(dir, "nested", "deeper"))).toBe(0o700);
  });

  it("refuses to change a file others may read rather than rewrite it", async () => {
    const path = join(dir, "config.json");
    await writeFile(path, "{}", { mode: 0o644 });
    await chmod(path, 0o644);
    await expect(updateConfig(path, { org: "o" })).rejects.toMatchObject({ code: "config_insecure" });
  });
});

describe("profiles", () => {
  it("reads a flat file as the profile `default`, and keeps it flat while only that profile changes", async () => {
    const path = join(dir, "config.json");
    await writeConfig(path, { url: "http://api", token: "evs_1" });
    expect(await readConfigDocument(path)).toEqual({
      profiles: { default: { url: "http://api", token: "evs_1" } },
      flat: true,
    });
    expect(await readConfig(path)).toEqual({ url: "http://api", token: "evs_1" });
    await updateConfig(path, { org: "o1" });
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({
      url: "http://api",
      token: "evs_1",
      org: "o1",
    });
  });

  it("turns a flat file into profiles when another profile is written, the flat one kept as `default`", async () => {
    const path = join(dir, "config.json");
    await writeConfig(path, { url: "http://api", token: "evs_1" });
    await updateConfig(path, { url: "http://staging", api_key: "evk_2" }, "staging");
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({
      profiles: {
        default: { url: "http://api", token: "evs_1" },
        staging: { url: "http://staging", api_key: "evk_2" },
      },
    });
    expect(await modeOf(path)).toBe(0o600);
    expect(await readConfig(path, "staging")).toEqual({ url: "http://staging", api_key: "evk_2" });
    expect(await readConfig(path, "missing")).toEqual({});
  });

  it("reads the file's default profile unless one is named", async () => {
    const path = join(dir, "config.json");
    await writeConfigDocument(path, {
      default_profile: "prod",
      profiles: { prod: { url: "http://prod" }, dev: { url: "http://dev" } },
      flat: false,
    });
    expect(await readConfig(path)).toEqual({ url: "http://prod" });
    expect(await readConfig(path, "dev")).toEqual({ url: "http://dev" });
  });

  it("refuses a profile that is not an object, or a field it does not know", async () => {
    const path = join(dir, "config.json");
    await writeFile(path, JSON.stringify({ profiles: { prod: "x" } }), { mode: 0o600 });
    await expect(readConfig(path)).rejects.toMatchObject({ code: "config_invalid" });
    await writeFile(path, JSON.stringify({ profiles: { prod: { password: "x" } } }), { mode: 0o600 });
    await expect(readConfig(path)).rejects.toThrow(/unknown field "password"/);
    await writeFile(path, JSON.stringify({ profiles: {}, extra: 1 }), { mode: 0o600 });
    await expect(readConfig(path)).rejects.toMatchObject({ code: "config_invalid" });
  });
});
