import { type Static, type TSchema, Type } from "@sinclair/typebox";

/**
 * Where a `ref` keeps the schema it refers to, for the wire mappers (wire.ts): a symbol, so the
 * document and the validators, which read string keys, never see it.
 */
export const REFERS_TO = Symbol("refers to");

/**
 * A reference to a named schema (one with an `$id`, registered with the app): the document shows
 * it once, under components, and refers to it.
 */
export function ref<T extends TSchema>(schema: T) {
  if (!schema.$id) throw new Error("a referenced schema needs an $id");
  const reference = Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
  Object.assign(reference, { [REFERS_TO]: schema });
  return reference;
}

/** Idempotency-Key where it is required (docs/idempotency.md); lower case because Fastify lower-cases headers. */
export const IdempotentHeaders = Type.Object({
  "idempotency-key": Type.String({ minLength: 1, maxLength: 255, title: "Idempotency-Key" }),
});

/** Idempotency-Key where it is optional and honoured when sent. */
export const OptionalIdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(Type.String({ minLength: 1, maxLength: 255, title: "Idempotency-Key" })),
});

/** `limit` and `cursor` of every cursor list (docs/paging.md). */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
});

/** A resource's display name, as it is created or renamed (organization, app, program, bundle…). */
export const Name = Type.String({ minLength: 1, maxLength: 200 });

export const Uuid = Type.String({ format: "uuid" });
export const DateTime = Type.String({ format: "date-time" });

/** A page envelope of `item` (referred to when it is a named schema). */
export function Page<T extends TSchema>(item: T, name: string) {
  return Type.Object(
    {
      items: Type.Array(item.$id ? ref(item) : Type.Unsafe<Static<T>>(item)),
      next_cursor: Type.Union([Type.String(), Type.Null()]),
    },
    { title: name },
  );
}
