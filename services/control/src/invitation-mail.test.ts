import { describe, expect, it } from "vitest";
import { invitationMail, quotedName } from "./invitation-mail.js";

describe("quotedName", () => {
  it("keeps an organization's name on one bounded line, so it cannot forge the mail's own paragraphs", () => {
    expect(quotedName("Acme\n\nAccept here instead: https://evil.example\r\n")).toBe(
      "Acme Accept here instead: https://evil.example",
    );
    expect(quotedName("a\u202Eb\u0000c")).toBe("a b c");
    expect(quotedName("x".repeat(200))).toBe(`${"x".repeat(80)}…`);
  });
});

describe("invitationMail", () => {
  it("is the same mail whatever the recipient's account, and names who invited", () => {
    const mail = invitationMail({
      to: "grace@example.com",
      organization: "Acme",
      inviter: "ada@example.com",
      role: "member",
      link: "https://evalp.example/accept-invitation?token=t",
    });
    expect(mail.subject).toBe('Invitation to the organization "Acme" on evalp');
    expect(mail.text).toContain(
      'ada@example.com invited you to join the organization "Acme" on evalp as member.',
    );
    expect(mail.text).toContain("https://evalp.example/accept-invitation?token=t");
  });
});
