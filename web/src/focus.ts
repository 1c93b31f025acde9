import { useLayoutEffect } from "react";

/**
 * Moves focus to what `target` returns when a view appears (and again when `when` turns true), in
 * the same task that puts the view on the screen. An effect would run after the browser paints:
 * a key pressed in between, by a quick keyboard user or by a tool that reacts to the new text,
 * would land on the page's body and do nothing.
 */
export function useFocusOnShow(target: () => HTMLElement | null | undefined, when = true): void {
  // biome-ignore lint/correctness/useExhaustiveDependencies: `target` reads refs; only `when` decides.
  useLayoutEffect(() => {
    if (when) target()?.focus();
  }, [when]);
}
