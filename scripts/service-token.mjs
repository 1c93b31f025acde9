// Prints a service token of this cluster (a minute long, packages/kit/src/service-tokens.ts),
// signed with the first secret of SERVICE_TOKEN_SECRETS, for calling a plane's RPC port by hand:
//
//   TOKEN=$(SERVICE_TOKEN_SECRETS=... node scripts/service-token.mjs [caller])
//   grpcurl -plaintext -H "authorization: Bearer $TOKEN" 127.0.0.1:8081 list
//
// The caller (default `operator`) is what the services log the call as; the token names no
// actor, so the RPCs that act for one refuse it (forbidden) and reflection and the
// plane-internal reads answer.
import { configSchema, mintServiceToken, parseServiceTokenSecrets } from "@evalp/kit";

const { SERVICE_TOKEN_SECRETS: secrets } = configSchema
  .pick({ SERVICE_TOKEN_SECRETS: true })
  .parse(process.env);
if (!secrets) {
  console.error("SERVICE_TOKEN_SECRETS is required: the secrets the services verify tokens with");
  process.exit(2);
}
console.log(await mintServiceToken(process.argv[2] ?? "operator", parseServiceTokenSecrets(secrets)));
