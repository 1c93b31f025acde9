/** What the document says of one operation: prose, kept apart from the route that declares the rest. */
export type Prose = {
  summary: string;
  description: string;
  /** What each success status means, by status. */
  responses: Partial<Record<number, string>>;
};

/**
 * A plane of the API as its routes declare it: the tag of its operations and their prose (its
 * `prose.ts`, by operationId). A route's `id` is one of `Id`, so the compiler refuses a route
 * whose operation has no prose.
 */
export type Plane<Id extends string = string> = {
  tag: string;
  prose: Record<Id, Prose>;
};

/** The plane tagged `tag` whose operations are described by `prose`. */
export function plane<Id extends string>(tag: string, prose: Record<Id, Prose>): Plane<Id> {
  return { tag, prose };
}
