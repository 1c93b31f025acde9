import type { components } from "@evalp/client";
import { useCallback, useEffect, useRef, useState } from "react";

type Snapshot = components["schemas"]["ParticipantInterview"];
export type TranscriptEntry = components["schemas"]["TranscriptEntry"];

/** Where the start answer says the participant's realtime door is, and the token that opens it. */
export type Connection = { participant_token: string; server_url: string; expires_at: string };

/** What the participant's door pushes (docs/interview.md#realtime) that the page uses. */
type Frame = { interview: Snapshot } | { entry: TranscriptEntry } | undefined;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** The snapshot's fields the page relies on; the AsyncAPI document describes the rest. */
function isSnapshot(value: unknown): value is Snapshot {
  return (
    isObject(value) &&
    typeof value.available === "boolean" &&
    typeof value.consented === "boolean" &&
    typeof value.status === "string"
  );
}

function isEntry(value: unknown): value is TranscriptEntry {
  return (
    isObject(value) &&
    typeof value.entry_id === "string" &&
    typeof value.seq === "number" &&
    typeof value.speaker === "string" &&
    typeof value.text === "string"
  );
}

/**
 * What the agent said. The transcript also holds each question's prompt as the agent's, with
 * modality `text` (docs/interview.md#the-transcript): the page shows those as the questions.
 */
function isTurn(entry: TranscriptEntry): boolean {
  return entry.speaker === "agent" && entry.modality !== "text";
}

/** A `state` or `entry` frame; anything else (an error frame, a frame of a newer kind) is ignored. */
function parseFrame(data: unknown): Frame {
  if (typeof data !== "string") return undefined;
  try {
    const frame: unknown = JSON.parse(data);
    if (!isObject(frame)) return undefined;
    if (frame.type === "state" && isSnapshot(frame.interview)) return { interview: frame.interview };
    if (frame.type === "entry" && isEntry(frame.entry)) return { entry: frame.entry };
  } catch {
    // Not JSON: nothing the page can use.
  }
  return undefined;
}

/**
 * The participant's realtime socket while the page is open: each new revision of the interview
 * is handed to `onState`, and the agent's turns are collected in order. When the socket closes
 * for another reason than its token (4401: expired, revoked or superseded), `onLost` is told, so
 * that the page can start again and get a fresh connection.
 */
export function useAgentTurns(
  connection: Connection | undefined,
  onState: (snapshot: Snapshot) => void,
  onLost: () => void,
): { turns: TranscriptEntry[]; addTurns: (entries: TranscriptEntry[]) => void; open: boolean } {
  const [turns, setTurns] = useState<TranscriptEntry[]>([]);
  const [open, setOpen] = useState(false);
  // The latest callbacks, without reopening the socket each time the page renders them anew.
  const handlers = useRef({ onState, onLost });
  handlers.current = { onState, onLost };

  // The agent's turns among `entries`, each once, in transcript order (the socket and a
  // transcript read may both bring one).
  const addTurns = useCallback(
    (entries: TranscriptEntry[]) =>
      setTurns((shown) => {
        const known = new Set(shown.map((entry) => entry.entry_id));
        const added = entries.filter((entry) => isTurn(entry) && !known.has(entry.entry_id));
        return added.length === 0 ? shown : [...shown, ...added].sort((a, b) => a.seq - b.seq);
      }),
    [],
  );

  useEffect(() => {
    if (!connection) return;
    let closing = false;
    // The browser cannot set an Authorization header on a WebSocket: the token rides as a subprotocol.
    const socket = new WebSocket(connection.server_url, ["evalp", `bearer.${connection.participant_token}`]);
    socket.onopen = () => setOpen(true);
    socket.onmessage = (message) => {
      const frame = parseFrame(message.data);
      if (frame && "interview" in frame) handlers.current.onState(frame.interview);
      if (frame && "entry" in frame) addTurns([frame.entry]);
    };
    socket.onclose = (event) => {
      setOpen(false);
      if (!closing && event.code !== 4401) handlers.current.onLost();
    };
    return () => {
      closing = true;
      socket.close(1000);
    };
  }, [connection, addTurns]);

  return { turns, addTurns, open };
}
