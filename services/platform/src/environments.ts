import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { forwardedCall } from "@evalp/kit";
import { PageRequestSchema } from "@evalp/proto/common/v1/page";
import type { AppRef } from "@evalp/proto/platform/v1/template";
import type { Deps } from "./deps.js";

/** Every environment id of an app, from the control plane (events of app-level changes go to each). */
export async function environmentIdsOf(deps: Deps, app: AppRef, ctx: HandlerContext): Promise<string[]> {
  const ids: string[] = [];
  let page = create(PageRequestSchema, { limit: 100 });
  for (;;) {
    const answer = await deps.control.organizations.listEnvironments(
      { organizationId: app.organizationId, appId: app.appId, page },
      forwardedCall(ctx),
    );
    ids.push(...answer.items.map((environment) => environment.id));
    if (!answer.page?.next) return ids;
    page = create(PageRequestSchema, { limit: 100, after: answer.page.next });
  }
}
