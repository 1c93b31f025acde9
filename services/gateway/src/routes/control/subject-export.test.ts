import { describe, expect, it } from "vitest";
import { type ExportPiece, exportText } from "./subject-export.js";

async function* pieces(...items: ExportPiece[]): AsyncGenerator<ExportPiece> {
  yield* items;
}

async function text(planes: ReadonlyArray<readonly [string, () => AsyncIterable<ExportPiece>]>) {
  let out = "";
  for await (const chunk of exportText({ id: "s1", profile: { a: 1 } }, planes, new Date(0))) out += chunk;
  return out;
}

describe("exportText", () => {
  it("writes one JSON document of the subject and every plane's sections, rows across pieces joined", async () => {
    const written = await text([
      [
        "interview",
        () =>
          pieces(
            { section: "evaluations", rows: ['{"id":"e1"}'] },
            { section: "entries", rows: [] },
            { section: "entries", rows: ['{"seq":1}', '{"seq":2}'] },
            { section: "entries", rows: ['{"seq":3}'] },
          ),
      ],
      ["platform", () => pieces({ section: "continuous_answers", rows: [] })],
      ["webhooks", () => pieces()],
    ]);
    expect(JSON.parse(written)).toEqual({
      subject_id: "s1",
      exported_at: "1970-01-01T00:00:00.000Z",
      subject: { id: "s1", profile: { a: 1 } },
      interview: { evaluations: [{ id: "e1" }], entries: [{ seq: 1 }, { seq: 2 }, { seq: 3 }] },
      platform: { continuous_answers: [] },
      webhooks: {},
    });
  });

  it("opens a plane's stream only once the plane before it has ended", async () => {
    const opened: string[] = [];
    const plane = (name: string) =>
      [
        name,
        () => {
          opened.push(name);
          return pieces({ section: name, rows: [] });
        },
      ] as const;
    const chunks = exportText({ id: "s1" }, [plane("a"), plane("b")], new Date(0));
    await chunks.next();
    expect(opened).toEqual([]);
    await chunks.next();
    await chunks.next();
    expect(opened).toEqual(["a"]);
  });
});
