import type { ConnectRouter } from "@connectrpc/connect";
import { callerTable, createEnvironmentCheck } from "@evalp/kit";
import { UsageService } from "@evalp/proto/common/v1/usage";
import { AgentService } from "@evalp/proto/interview/v1/agent";
import { AnalyticsService } from "@evalp/proto/interview/v1/analytics";
import { EvaluationService } from "@evalp/proto/interview/v1/evaluation";
import { ParticipantService } from "@evalp/proto/interview/v1/participant";
import { SubjectExportService } from "@evalp/proto/interview/v1/subject_export";
import type { Deps } from "./deps.js";
import { closeAgentConnection } from "./rpc/close-agent-connection.js";
import { consent } from "./rpc/consent.js";
import { countUsage } from "./rpc/count-usage.js";
import { createAgentSession } from "./rpc/create-agent-session.js";
import { createEvaluation } from "./rpc/create-evaluation.js";
import { createParticipantSession } from "./rpc/create-participant-session.js";
import { exportSubject } from "./rpc/export-subject.js";
import { finishInterview } from "./rpc/finish-interview.js";
import { getAgentInterview } from "./rpc/get-agent-interview.js";
import { getAgentTranscript } from "./rpc/get-agent-transcript.js";
import { getEvaluation } from "./rpc/get-evaluation.js";
import { getEvaluationInterview } from "./rpc/get-evaluation-interview.js";
import { getEvaluationResult } from "./rpc/get-evaluation-result.js";
import { getSnapshot } from "./rpc/get-snapshot.js";
import { getSummary } from "./rpc/get-summary.js";
import { getTranscript } from "./rpc/get-transcript.js";
import { listBehavioralEvents } from "./rpc/list-behavioral-events.js";
import { listEvaluationResults } from "./rpc/list-evaluation-results.js";
import { listEvaluations } from "./rpc/list-evaluations.js";
import { openAgentConnection } from "./rpc/open-agent-connection.js";
import { putAgentPrices } from "./rpc/put-agent-prices.js";
import { recordEvents } from "./rpc/record-events.js";
import { recordUtterance } from "./rpc/record-utterance.js";
import { renewAgentConnections } from "./rpc/renew-agent-connections.js";
import { rescoreEvaluation } from "./rpc/rescore-evaluation.js";
import { resolveProposal } from "./rpc/resolve-proposal.js";
import { revokeParticipantSession } from "./rpc/revoke-participant-session.js";
import { runCommand } from "./rpc/run-command.js";
import { startInterview } from "./rpc/start-interview.js";
import { submitAnswer } from "./rpc/submit-answer.js";

/** Who may call interview's RPCs: the gateway every public one; control the usage it reports. */
export const CALLERS = callerTable({
  gateway: [EvaluationService, ParticipantService, AgentService, AnalyticsService, SubjectExportService],
  control: [UsageService.method.countUsage],
});

/** Every interview-plane RPC, one file each under `rpc/`. */
export function routes(deps: Deps) {
  const requireEnvironment = createEnvironmentCheck(deps.control.organizations);
  return (router: ConnectRouter) => {
    router.service(SubjectExportService, { exportSubject: exportSubject(deps) });
    router.service(EvaluationService, {
      createEvaluation: createEvaluation(deps, requireEnvironment),
      getEvaluation: getEvaluation(deps, requireEnvironment),
      createParticipantSession: createParticipantSession(deps, requireEnvironment),
      getEvaluationInterview: getEvaluationInterview(deps, requireEnvironment),
      listBehavioralEvents: listBehavioralEvents(deps, requireEnvironment),
      listEvaluations: listEvaluations(deps, requireEnvironment),
      getEvaluationResult: getEvaluationResult(deps, requireEnvironment),
      listEvaluationResults: listEvaluationResults(deps, requireEnvironment),
      rescoreEvaluation: rescoreEvaluation(deps, requireEnvironment),
      revokeParticipantSession: revokeParticipantSession(deps, requireEnvironment),
    });
    router.service(ParticipantService, {
      startInterview: startInterview(deps),
      getSnapshot: getSnapshot(deps),
      consent: consent(deps),
      submitAnswer: submitAnswer(deps),
      finishInterview: finishInterview(deps),
      getTranscript: getTranscript(deps),
      recordEvents: recordEvents(deps),
      recordUtterance: recordUtterance(deps),
    });
    router.service(AgentService, {
      createAgentSession: createAgentSession(deps, requireEnvironment),
      getAgentInterview: getAgentInterview(deps),
      runCommand: runCommand(deps),
      openAgentConnection: openAgentConnection(deps),
      renewAgentConnections: renewAgentConnections(deps),
      closeAgentConnection: closeAgentConnection(deps, deps.realtime.changed),
      resolveProposal: resolveProposal(deps),
      putAgentPrices: putAgentPrices(deps, requireEnvironment),
      getAgentTranscript: getAgentTranscript(deps),
    });
    router.service(AnalyticsService, { getSummary: getSummary(deps, requireEnvironment) });
    router.service(UsageService, { countUsage: countUsage(deps) });
  };
}
