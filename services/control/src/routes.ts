import type { ConnectRouter } from "@connectrpc/connect";
import { ApiKeyService } from "@evalp/proto/control/v1/api_key";
import { AuthService } from "@evalp/proto/control/v1/auth";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import type { Deps } from "./deps.js";
import { authenticate } from "./rpc/authenticate.js";
import { createApiKey } from "./rpc/create-api-key.js";
import { createApp } from "./rpc/create-app.js";
import { createEnvironment } from "./rpc/create-environment.js";
import { createOrganization } from "./rpc/create-organization.js";
import { getApp } from "./rpc/get-app.js";
import { getOrganization } from "./rpc/get-organization.js";
import { listApiKeys } from "./rpc/list-api-keys.js";
import { listApps } from "./rpc/list-apps.js";
import { listEnvironments } from "./rpc/list-environments.js";
import { login } from "./rpc/login.js";
import { logout } from "./rpc/logout.js";
import { revokeApiKey } from "./rpc/revoke-api-key.js";
import { signup } from "./rpc/signup.js";

/** Every control-plane RPC, one file each under `rpc/`. */
export function routes(deps: Deps) {
  return (router: ConnectRouter) => {
    router.service(AuthService, {
      signup: signup(deps),
      login: login(deps),
      logout: logout(deps),
      authenticate: authenticate(deps),
    });
    router.service(OrganizationService, {
      createOrganization: createOrganization(deps),
      getOrganization: getOrganization(deps),
      createApp: createApp(deps),
      listApps: listApps(deps),
      getApp: getApp(deps),
      createEnvironment: createEnvironment(deps),
      listEnvironments: listEnvironments(deps),
    });
    router.service(ApiKeyService, {
      createApiKey: createApiKey(deps),
      listApiKeys: listApiKeys(deps),
      revokeApiKey: revokeApiKey(deps),
    });
  };
}
