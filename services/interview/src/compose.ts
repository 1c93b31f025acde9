import {
  type ComposeProcess,
  planeClients,
  requireJwtSecret,
  type ServiceProcess,
  serviceBase,
  serviceCaller,
} from "@evalp/kit";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import { BundleService } from "@evalp/proto/platform/v1/bundle";
import { createAgentSweeper } from "./agent/connections.js";
import { interviewRetention } from "./db/retention.js";
import { createRealtime } from "./realtime.js";
import { createScorer } from "./scoring/scorer.js";
import { interviewService, SCHEMA } from "./server.js";
import { eraseSubjectData } from "./subject-erasure.js";

/**
 * The interview process: its RPCs, the sweeper of agent connections and pauses, the scorer of
 * ended interviews, its outbox relay
 * and the realtime frames it publishes once NATS answers.
 */
export const createInterview: ComposeProcess<ServiceProcess> = async (config, logger, options = {}) => {
  // It signs or verifies with the JWT secret: without one (production) it does not start.
  requireJwtSecret(config);
  const ports = { port: 8083, opsPort: 9083 };
  const base = serviceBase({ name: "interview", schema: SCHEMA, ports }, config, logger, options);
  const { pool, shutdown } = base;
  base.retain(interviewRetention(config));
  const realtime = createRealtime({ subjectPrefix: config.REALTIME_SUBJECT_PREFIX, logger });
  const caller = serviceCaller(config, "interview", base.registry);
  const ofControl = planeClients("control", config, caller);
  const deps = {
    pool,
    logger,
    config,
    control: {
      organizations: ofControl(OrganizationService),
      subjects: ofControl(SubjectService),
      quotas: ofControl(QuotaService),
    },
    platform: { bundles: planeClients("platform", config, caller)(BundleService) },
    realtime,
  };
  const sweeper = createAgentSweeper(deps, realtime.changed);
  shutdown.register("agent sweeper", () => sweeper.stop());
  // Any replica scores the interviews that ended (docs/results.md).
  const scorer = createScorer(deps);
  shutdown.register("scorer", () => scorer.stop());
  const publisher = base.outboxRelay();
  const erasures = base.subjectErasures("interview", {
    erase: eraseSubjectData(deps),
    control: deps.control.subjects,
  });
  return base.serve(interviewService(deps), {
    listening: () => {
      sweeper.start();
      scorer.start();
    },
    // `interview.started` / `interview.completed` wait in the outbox until NATS answers; realtime
    // frames go out once it does.
    async connect() {
      const nc = await publisher.start();
      realtime.attach(nc);
      // This plane's part of every subject erasure (docs/subjects.md#erasure), reported to control.
      erasures.start(nc);
    },
  });
};
