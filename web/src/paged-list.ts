import { useCallback, useEffect, useRef, useState } from "react";
import { errorWords } from "./api.js";

/** One page of a cursor-paged list (docs/paging.md). */
export type Page<T> = { items: T[]; next_cursor: string | null };

export type PagedList<T> = {
  /** The rows shown, first page first; undefined while the first page loads. */
  items: T[] | undefined;
  error: string | undefined;
  /** Whether the API said a next page exists. */
  hasMore: boolean;
  loadingMore: boolean;
  /** Appends the next page below the rows shown. */
  more: () => void;
  /** The first page again, keeping the rows shown until it arrives (a Refresh button). */
  reload: () => void;
  /** Changes rows in place (a row an action answered anew). */
  update: (change: (items: T[]) => T[]) => void;
};

/**
 * The console's one way to page: `fetchPage(cursor)` asks for a page (`null`: the first). A new
 * `fetchPage` (its filters changed) starts over from the first page; an answer that arrives after
 * a newer start is dropped, so a slow page of an old filter never shows under a new one.
 */
export function usePagedList<T>(fetchPage: (cursor: string | null) => Promise<Page<T>>): PagedList<T> {
  const [items, setItems] = useState<T[] | undefined>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [loadingMore, setLoadingMore] = useState(false);
  // Bumped at each start over: answers of an older generation are stale.
  const generation = useRef(0);

  const first = useCallback(
    (clear: boolean) => {
      const mine = ++generation.current;
      if (clear) setItems(undefined);
      setError(undefined);
      fetchPage(null)
        .then((page) => {
          if (mine !== generation.current) return;
          setItems(page.items);
          setCursor(page.next_cursor);
        })
        .catch((failure) => mine === generation.current && setError(errorWords(failure, {})));
    },
    [fetchPage],
  );

  useEffect(() => {
    first(true);
    return () => {
      generation.current++;
    };
  }, [first]);

  const more = useCallback(() => {
    if (cursor === null) return;
    const mine = generation.current;
    setLoadingMore(true);
    fetchPage(cursor)
      .then((page) => {
        if (mine !== generation.current) return;
        setItems((shown) => [...(shown ?? []), ...page.items]);
        setCursor(page.next_cursor);
      })
      .catch((failure) => mine === generation.current && setError(errorWords(failure, {})))
      .finally(() => setLoadingMore(false));
  }, [fetchPage, cursor]);

  const reload = useCallback(() => first(false), [first]);
  const update = useCallback(
    (change: (items: T[]) => T[]) => setItems((shown) => shown && change(shown)),
    [],
  );

  return { items, error, hasMore: cursor !== null, loadingMore, more, reload, update };
}
