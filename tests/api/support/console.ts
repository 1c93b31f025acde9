import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { Tenant } from "./fixtures.js";

/** Logs a person (the tenant's owner, a member) in to the console and waits for the organization's apps. */
export async function logInToConsole(
  page: Page,
  stackUrl: string,
  tenant: Pick<Tenant, "email" | "password">,
): Promise<void> {
  await page.goto(`${stackUrl}/console`);
  await page.getByLabel("Email").fill(tenant.email);
  await page.getByLabel("Password").fill(tenant.password);
  await page.getByRole("button", { name: "Log in" }).click();
  try {
    // Logging in, then listing the apps and each one's environments: several calls in a row.
    await expect
      .poll(() => page.getByRole("heading", { name: /Production/ }).count(), { timeout: 15_000 })
      .toBe(1);
  } catch (failure) {
    throw new Error(`the console after logging in shows: ${await page.locator("body").textContent()}`, {
      cause: failure,
    });
  }
}

/** Opens one section of an environment (Evaluations, Webhooks, API keys, …) by its button. */
export async function openSection(page: Page, section: string, environment = "Production"): Promise<void> {
  await page
    .getByRole("navigation", { name: `Sections of ${environment}` })
    .getByRole("button", { name: section, exact: true })
    .click();
}
