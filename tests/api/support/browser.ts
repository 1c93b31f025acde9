import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import axe from "axe-core";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

/**
 * The machine's Chromium (Debian's package), never a browser download. Without the background
 * flags it reaches out to Google's hosts at every start, which a closed network refuses.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium), as .ci/run does`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A desktop's and a phone's viewport. */
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/**
 * A page that fails the test on a Content-Security-Policy violation or a script error: what the
 * pages' policy forbids must be nothing they need.
 */
export async function openPage(
  browser: Browser,
  viewport = DESKTOP,
): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text())) {
      problems.push(message.text());
    }
  });
  page.on("pageerror", (error) => problems.push(error.message));
  return { page, problems };
}

/**
 * axe-core's serious and critical violations on the page as it stands. The engine is evaluated
 * through the debugging protocol, which the page's CSP (no inline script) does not govern.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  // A string, run in the page: the page's globals (axe, document) are not this file's.
  const violations = await page.evaluate<
    Array<{ id: string; impact: string | null; nodes: number; help: string }>
  >(
    `axe.run(document, { resultTypes: ["violations"] }).then((results) =>
      results.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, help: v.help })))`,
  );
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}, ${v.nodes} nodes): ${v.help}`);
}

export async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousViolations(page)).toEqual([]);
}

const SCREENSHOTS = fileURLToPath(new URL("../../../var/screenshots/", import.meta.url));

/** How wide the document is: wider than the viewport means a sideways scroll. */
const documentWidth = (page: Page) => page.evaluate<number>("document.documentElement.scrollWidth");

/** The outermost elements reaching past the screen's right edge, to name what to fix. */
const PAST_THE_EDGE = `(() => {
  const edge = document.documentElement.clientWidth + 0.5;
  // An element's own box, or what it holds (a long unbroken line of text) reaching past it.
  const past = (element) => {
    const box = element.getBoundingClientRect();
    return box.left + Math.max(box.width, element.scrollWidth) > edge;
  };
  return [...document.querySelectorAll("body *")]
    .filter((element) => past(element) && !(element.parentElement && past(element.parentElement)))
    .map((element) => element.tagName.toLowerCase() + (element.className ? "." + String(element.className).trim().split(/\\s+/).join(".") : "") +
      " (" + Math.round(Math.max(element.getBoundingClientRect().width, element.scrollWidth)) + " px)");
})()`;

/**
 * A screenshot of the page under var/screenshots/ (git-ignored), for a person to look at. At a
 * phone's width it is also the check that nothing on the page is wider than the phone's screen.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (page.viewportSize()?.width === PHONE.width) {
    try {
      // Polled: what redraws itself on a resize (a chart) does so after a frame or two.
      await poll(() => documentWidth(page), { timeout: 3_000 }).toBeLessThanOrEqual(PHONE.width);
    } catch (failure) {
      const wide = await page.evaluate<string[]>(PAST_THE_EDGE);
      throw new Error(`${name} is wider than a phone's screen: ${wide.join(", ")}`, { cause: failure });
    }
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * Screenshots of the page as it stands, `<name>-desktop` and `<name>-phone`: resized to a desktop's
 * and then to a phone's width, where the accessibility check runs too, and left at the width it had.
 */
export async function screenshotAtBothWidths(page: Page, name: string): Promise<void> {
  const before = page.viewportSize() ?? DESKTOP;
  await page.setViewportSize(DESKTOP);
  await screenshot(page, `${name}-desktop`);
  await page.setViewportSize(PHONE);
  await expectAccessible(page);
  await screenshot(page, `${name}-phone`);
  await page.setViewportSize(before);
}

/** Presses Tab until the focused element is the named button (a keyboard user's way there). */
export async function tabTo(page: Page, name: RegExp): Promise<void> {
  for (let presses = 0; presses < 20; presses++) {
    const button = page.locator("button:focus");
    const focused = (await button.count()) === 1 ? ((await button.textContent()) ?? "") : "";
    if (name.test(focused)) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`no button ${name} reached by Tab`);
}

/** A mailed link opened on the stack's gateway: the mail names PUBLIC_URL, the test's gateway listens elsewhere. */
export function onStack(stackUrl: string, link: string): string {
  const url = new URL(link);
  return `${stackUrl}${url.pathname}${url.search}${url.hash}`;
}

/**
 * Polls as `expect.poll` does, for up to 10 s rather than its second: what a page shows after a
 * few calls in a row takes longer than that on a loaded machine.
 */
export function poll<T>(
  read: () => T | Promise<T>,
  options: { timeout?: number } = {},
): ReturnType<typeof expect.poll<T>> {
  return expect.poll(read, { timeout: 10_000, ...options });
}
