import { generateServiceKeySet, type ServiceKeySet, schemaRoleUrl } from "@evalp/kit";

/** The processes a test platform runs, each with its own key pair and (the planes) Postgres role. */
export type ProcessIdentities = {
  keys: ServiceKeySet;
  /** The environment of one process: its own private key, every public key, its own role's DATABASE_URL. */
  env(name: string): Record<string, string>;
};

/**
 * Identities for the processes of one test platform started as child processes, as production
 * gives them: a key pair each, made for the test, and the planes connected as their schemas' roles.
 */
export function processIdentities(databaseUrl: string): ProcessIdentities {
  const keys = generateServiceKeySet();
  return {
    keys,
    env: (name) => ({
      SERVICE_KEY: keys.private[name] ?? "",
      SERVICE_PUBLIC_KEYS: keys.public,
      ...(name === "gateway" ? {} : { DATABASE_URL: schemaRoleUrl(databaseUrl, name) }),
    }),
  };
}
