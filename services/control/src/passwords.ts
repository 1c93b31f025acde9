import { hash, type Options, verify } from "@node-rs/argon2";

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane. `2` is Algorithm.Argon2id, a const enum
// that cannot be imported under verbatimModuleSyntax.
const OPTIONS: Options = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** A hash of nothing anyone knows, verified when the user does not exist so timing tells nothing. */
let decoy: Promise<string> | null = null;

/**
 * Verifies a password against a stored hash, or against a decoy when there is none, so that
 * an unknown email costs the same time as a wrong password.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    decoy ??= hashPassword(`decoy-${Math.random()}`);
    await verify(await decoy, password);
    return false;
  }
  return verify(stored, password);
}
