import { describe, expect, it } from "vitest";
import { BUNDLE_STATUSES, canMove } from "./transitions.js";

describe("bundle transitions", () => {
  it("allow exactly the contract's eight moves", () => {
    const allowed = BUNDLE_STATUSES.flatMap((from) =>
      BUNDLE_STATUSES.filter((to) => canMove(from, to)).map((to) => `${from}->${to}`),
    );
    expect(allowed.sort()).toEqual(
      [
        "draft->validated",
        "draft->archived",
        "validated->published",
        "validated->draft",
        "validated->archived",
        "published->deprecated",
        "deprecated->published",
        "deprecated->archived",
      ].sort(),
    );
  });

  it("never allow staying in the same status", () => {
    for (const status of BUNDLE_STATUSES) expect(canMove(status, status)).toBe(false);
  });
});
