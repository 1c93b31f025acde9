import type { JsonObject } from "@bufbuild/protobuf";
import type { Queryable } from "@evalp/kit";
import { commandLatencyP95, pricesOfInterview } from "../db/agent.js";
import { agentReportPayloads } from "../db/entries.js";

type UsageLine = { provider: string; model: string; unit: string; quantity: number };
type ErrorLine = { provider: string; code: string };

/** What the agent side adds to an interview's metrics (docs/interview.md#the-agent-protocol), all computed here. */
export type AgentMetrics = {
  usage: JsonObject;
  providerErrors: JsonObject;
  apiLatencyP95Ms: number | undefined;
  estimatedCostUsd: number | undefined;
};

/**
 * `usage` = `{provider: {model: {unit: quantity}}}` summed over every `agent_report`;
 * `provider_errors` = `{provider: {code: count}}`; `api_latency_p95_ms` over acked commands
 * (receipt → ack); `estimated_cost_usd` = usage × the environment's prices, absent when any
 * usage line has no price, and when no usage was reported at all (no agent took part).
 */
export async function agentMetrics(db: Queryable, interviewId: string): Promise<AgentMetrics> {
  // One after another: `db` may be one connection (the scorer's transaction), which runs one
  // query at a time whatever is asked of it, and node-postgres refuses to queue them from pg 9 on.
  const reports = await agentReportPayloads<{ usage?: UsageLine[]; errors?: ErrorLine[] }>(db, interviewId);
  const latency = await commandLatencyP95(db, interviewId);
  const prices = await pricesOfInterview(db, interviewId);
  const usage: Record<string, Record<string, Record<string, number>>> = {};
  const errors: Record<string, Record<string, number>> = {};
  for (const payload of reports) {
    for (const line of payload.usage ?? []) {
      const byModel = usage[line.provider] ?? {};
      const byUnit = byModel[line.model] ?? {};
      byUnit[line.unit] = (byUnit[line.unit] ?? 0) + line.quantity;
      byModel[line.model] = byUnit;
      usage[line.provider] = byModel;
    }
    for (const line of payload.errors ?? []) {
      const byCode = errors[line.provider] ?? {};
      byCode[line.code] = (byCode[line.code] ?? 0) + 1;
      errors[line.provider] = byCode;
    }
  }
  const price = new Map(
    prices.map((row) => [`${row.provider}\n${row.model}\n${row.unit}`, row.usd_per_unit]),
  );
  let cost: number | undefined = Object.keys(usage).length === 0 ? undefined : 0;
  for (const [provider, byModel] of Object.entries(usage)) {
    for (const [model, byUnit] of Object.entries(byModel)) {
      for (const [unit, quantity] of Object.entries(byUnit)) {
        const perUnit = price.get(`${provider}\n${model}\n${unit}`);
        if (perUnit === undefined || cost === undefined) cost = undefined;
        else cost += quantity * perUnit;
      }
    }
  }
  return {
    usage: usage as JsonObject,
    providerErrors: errors as JsonObject,
    apiLatencyP95Ms: latency ?? undefined,
    estimatedCostUsd: cost,
  };
}
