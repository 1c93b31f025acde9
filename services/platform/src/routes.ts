import type { ConnectRouter } from "@connectrpc/connect";
import { callerTable } from "@evalp/kit";
import { BundleService } from "@evalp/proto/platform/v1/bundle";
import { ContinuousService } from "@evalp/proto/platform/v1/continuous";
import { SubjectExportService } from "@evalp/proto/platform/v1/subject_export";
import { TemplateService } from "@evalp/proto/platform/v1/template";
import { createAppCheck } from "./app-check.js";
import type { Deps } from "./deps.js";
import { addDefinition } from "./rpc/add-definition.js";
import { changeBundleStatus } from "./rpc/change-bundle-status.js";
import { cloneTemplate } from "./rpc/clone-template.js";
import { createBundle } from "./rpc/create-bundle.js";
import { createTemplate } from "./rpc/create-template.js";
import { exportSubject } from "./rpc/export-subject.js";
import { getBundle } from "./rpc/get-bundle.js";
import { getBundleContents } from "./rpc/get-bundle-contents.js";
import { getTemplate } from "./rpc/get-template.js";
import { listBundles } from "./rpc/list-bundles.js";
import { previewBundle } from "./rpc/preview-bundle.js";
import { recordAnswer } from "./rpc/record-answer.js";
import { scoreBundle } from "./rpc/score-bundle.js";

/** Who may call platform's RPCs: the gateway every public one; the interview plane the bundles it runs. */
export const CALLERS = callerTable({
  gateway: [TemplateService, BundleService, ContinuousService, SubjectExportService],
  interview: [
    BundleService.method.getBundle,
    BundleService.method.getBundleContents,
    // Scoring an interview that ended, and a rescore (services/interview/src/scoring).
    BundleService.method.scoreBundle,
  ],
});

/** Every platform-plane RPC, one file each under `rpc/`. */
export function routes(deps: Deps) {
  const requireApp = createAppCheck(deps);
  return (router: ConnectRouter) => {
    router.service(TemplateService, {
      createTemplate: createTemplate(deps, requireApp),
      getTemplate: getTemplate(deps, requireApp),
      addDefinition: addDefinition(deps, requireApp),
      cloneTemplate: cloneTemplate(deps, requireApp),
    });
    router.service(BundleService, {
      createBundle: createBundle(deps, requireApp),
      listBundles: listBundles(deps, requireApp),
      getBundle: getBundle(deps, requireApp),
      changeBundleStatus: changeBundleStatus(deps, requireApp),
      previewBundle: previewBundle(deps, requireApp),
      getBundleContents: getBundleContents(deps, requireApp),
      scoreBundle: scoreBundle(deps, requireApp),
    });
    router.service(ContinuousService, { recordAnswer: recordAnswer(deps) });
    router.service(SubjectExportService, { exportSubject: exportSubject(deps) });
  };
}
