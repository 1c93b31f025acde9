/** Bundle statuses (interface part 3). */
export const BUNDLE_STATUSES = ["draft", "validated", "published", "deprecated", "archived"] as const;
export type BundleStatus = (typeof BUNDLE_STATUSES)[number];

/** Every allowed move (docs/endpoints.md, the bundle statuses); anything else, the same status included, is refused. */
export const TRANSITIONS: Record<BundleStatus, readonly BundleStatus[]> = {
  draft: ["validated", "archived"],
  validated: ["published", "draft", "archived"],
  published: ["deprecated"],
  deprecated: ["published", "archived"],
  archived: [],
};

export function canMove(from: BundleStatus, to: BundleStatus): boolean {
  return TRANSITIONS[from].includes(to);
}
