import type { Mail } from "./mailer.js";

/** The longest organization name an invitation repeats; the rest is cut (it is the inviter's text). */
const MAX_NAME_CHARACTERS = 80;

/**
 * Text chosen by whoever invites, as an invitation may repeat it: one line (no line breaks or
 * other control characters to forge a paragraph of ours), bounded, and quoted where it is used.
 */
export function quotedName(text: string): string {
  const line = text
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  const cut = [...line];
  return cut.length > MAX_NAME_CHARACTERS ? `${cut.slice(0, MAX_NAME_CHARACTERS).join("")}…` : line;
}

/**
 * The invitation mail (docs/endpoints.md#memberships): the same for an email with an account and
 * one without, so the mail path tells the inviter nothing. It names who invited, and says that
 * nothing happens unless the recipient accepts: an organization's name is its creator's text.
 */
export function invitationMail(invitation: {
  to: string;
  organization: string;
  inviter: string | null;
  role: string;
  link: string;
}): Mail {
  const organization = quotedName(invitation.organization);
  const by = invitation.inviter ? `${invitation.inviter} invited you` : "You are invited";
  return {
    to: invitation.to,
    subject: `Invitation to the organization "${organization}" on evalp`,
    text:
      `${by} to join the organization "${organization}" on evalp as ${invitation.role}.\n\n` +
      `Accept within 7 days: ${invitation.link}\n` +
      "If you already have an evalp account, accept with its password; it stays as it is.\n\n" +
      "If you do not know this person or organization, ignore this mail: nothing happens unless you accept.\n",
  };
}
