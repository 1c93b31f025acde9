import { createHmac, timingSafeEqual } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { isUuid } from "@evalp/kit";
import { type PageInfo, type PagePosition, PagePositionSchema } from "@evalp/proto/common/v1/page";

/**
 * Opaque cursors: the (created_at, id) of the last item seen, bound to the list it came from
 * and signed, so that a cursor the service did not issue is refused (docs/paging.md) rather than
 * silently paging from wherever it points.
 */
export type CursorCodec = {
  encode(list: string, position: PagePosition): string;
  /** The position, or null when the cursor was not issued for this list by this service. */
  decode(list: string, cursor: string): PagePosition | null;
  /** `next_cursor` of a page: null on the last page. */
  next(list: string, info: PageInfo | undefined): string | null;
};

export function createCursorCodec(secret: string): CursorCodec {
  const key = createHmac("sha256", secret).update("evalp cursor key v1").digest();
  const sign = (list: string, body: string) =>
    createHmac("sha256", key).update(`${list}\n${body}`).digest().subarray(0, 16);

  const codec: CursorCodec = {
    encode(list, position) {
      const at = position.createdAt ? timestampDate(position.createdAt).toISOString() : "";
      const body = Buffer.from(JSON.stringify([at, position.id])).toString("base64url");
      return `${body}.${sign(list, body).toString("base64url")}`;
    },
    decode(list, cursor) {
      const [body, mac, ...rest] = cursor.split(".");
      if (!body || !mac || rest.length > 0) return null;
      const expected = sign(list, body);
      const given = Buffer.from(mac, "base64url");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      try {
        const [at, id] = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as unknown[];
        const date = new Date(String(at));
        if (typeof id !== "string" || !isUuid(id) || Number.isNaN(date.getTime())) return null;
        return create(PagePositionSchema, { createdAt: timestampFromDate(date), id });
      } catch {
        return null;
      }
    },
    next(list, info) {
      return info?.next ? codec.encode(list, info.next) : null;
    },
  };
  return codec;
}
