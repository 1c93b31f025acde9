// Prints a service token (a minute long, packages/kit/src/auth/service-tokens.ts) to one plane, for
// calling its RPC port by hand. It is signed with a process's own key, SERVICE_KEY or
// SERVICE_KEY_FILE (in development, that process's key generated under VAR_DIR), and the plane
// takes it as a call from that process, allowed what that process is allowed:
//
//   TOKEN=$(SERVICE_KEY_FILE=gateway-key.pem node scripts/service-token.mjs control [gateway])
//   grpcurl -plaintext -H "authorization: Bearer $TOKEN" 127.0.0.1:8081 list
//
// The process (default `gateway`) is what the plane logs the call as; the token names no actor,
// so the RPCs that act for one refuse it (forbidden) and reflection and the reads answer.
import { loadConfig, mintServiceToken, serviceSigningKey } from "@evalp/kit";

const [plane, as = "gateway"] = process.argv.slice(2);
if (!plane) {
  console.error(
    "usage: node scripts/service-token.mjs <plane: control|platform|interview|webhooks> [process]",
  );
  process.exit(2);
}
const config = loadConfig();
console.log(await mintServiceToken({ name: as, key: serviceSigningKey(config, as) }, plane));
