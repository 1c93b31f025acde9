// The reference agent (docs/interview.md#the-agent-protocol): drives an interview over the agent WebSocket from a scripted
// list of steps. A real agent (LiveKit Agents, Pipecat…) hears and speaks; this one only reads
// its script, so it shows the protocol and is what the end-to-end test runs.
import WebSocket from "ws";

/**
 * Placeholders a step's command may use, resolved from what the agent has seen so far:
 * `$revision` (the interview's current revision), `$proposal` (the last proposal's id),
 * `$participant_utterance` (the last participant utterance's entry id).
 */
function resolve(value, seen) {
  if (typeof value === "string" && value.startsWith("$")) {
    const name = value.slice(1);
    if (!(name in seen)) throw new Error(`nothing seen yet for ${value}`);
    return seen[name];
  }
  if (Array.isArray(value)) return value.map((item) => resolve(item, seen));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, resolve(inner, seen)]));
  }
  return value;
}

/**
 * Connects to `url` with `token` and runs `steps` in order:
 * - `{"send": command, "expect"?: "ack" | "<error code>"}`: sends the command (its `id` is
 *   `<prefix>-<n>` unless given) and waits for its ack or error frame;
 * - `{"await": "proposal_resolved"}`: waits until no proposal is pending (the participant tapped);
 * - `{"await": "item_kind", "value": "scenario"}` / `{"await": "status", "value": "completed"}`:
 *   waits for a state whose field has that value.
 * Resolves with every answer frame received, in order, and the last interview seen.
 */
export async function runAgent({ url, token, steps, prefix = "cmd", timeoutMs = 10_000, onFrame }) {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  await new Promise((done, fail) => {
    ws.once("open", done);
    ws.once("error", fail);
  });
  const seen = {};
  const answers = [];
  const pending = new Map();
  const watchers = [];
  const look = (interview) => {
    seen.revision = interview.revision;
    seen.interview = interview;
    for (const watcher of [...watchers]) {
      if (watcher.test(interview)) {
        watchers.splice(watchers.indexOf(watcher), 1);
        watcher.done(interview);
      }
    }
  };
  ws.on("message", (data) => {
    const frame = JSON.parse(data.toString());
    onFrame?.(frame);
    if (frame.interview) look(frame.interview);
    if (frame.type === "ack" || frame.type === "error") {
      const waiter = pending.get(frame.id);
      pending.delete(frame.id);
      waiter?.(frame);
    }
  });
  const within = (promise, what) =>
    Promise.race([
      promise,
      new Promise((_, fail) => setTimeout(() => fail(new Error(`timed out waiting for ${what}`)), timeoutMs)),
    ]);
  try {
    for (const [index, step] of steps.entries()) {
      if (step.send) {
        const command = { id: `${prefix}-${index + 1}`, ...resolve(step.send, seen) };
        const answered = new Promise((done) => pending.set(command.id, done));
        ws.send(JSON.stringify(command));
        const frame = await within(answered, `the answer to ${command.id}`);
        answers.push({ command, frame });
        const expected = step.expect ?? "ack";
        const got = frame.type === "ack" ? "ack" : frame.code;
        if (got !== expected) {
          throw new Error(
            `${command.id} (${command.type}): expected ${expected}, got ${JSON.stringify(frame)}`,
          );
        }
        if (frame.type === "ack" && frame.entry) {
          if (frame.entry.kind === "proposal") seen.proposal = frame.entry.id;
          if (frame.entry.kind === "utterance" && frame.entry.payload.speaker === "participant") {
            seen.participant_utterance = frame.entry.id;
          }
        }
      } else if (step.await) {
        const test =
          step.await === "proposal_resolved"
            ? (interview) => interview.pending_proposal === undefined
            : (interview) => interview[step.await] === step.value;
        if (seen.interview && test(seen.interview)) continue;
        await within(new Promise((done) => watchers.push({ test, done })), JSON.stringify(step));
      }
    }
    return { answers, interview: seen.interview };
  } finally {
    await new Promise((done) => {
      if (ws.readyState === WebSocket.CLOSED) return done();
      ws.once("close", done);
      ws.close();
    });
  }
}
