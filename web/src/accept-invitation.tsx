import { unwrap } from "@evalp/client";
import { api, errorWords, queryToken } from "./api.js";
import { PasswordForm } from "./password-form.js";

/** `/accept-invitation?token=…`, the link of an invitation mail (POST /v1/invitations/accept). */
export function AcceptInvitation() {
  const token = queryToken();
  if (token === undefined) return <MissingToken what="invitation" />;
  return (
    <PasswordForm
      title="Accept your invitation"
      intro="You have been invited to join an organization. If you are new, choose a password for your account. If you already have an account, enter its password."
      label="Password"
      hint="At least 8 characters. An existing account keeps its password."
      submitLabel="Join the organization"
      submit={async (password) => {
        try {
          await unwrap(api().POST("/v1/invitations/accept", { body: { token, password } }));
        } catch (error) {
          throw new Error(
            errorWords(error, {
              invitation_expired:
                "This invitation has expired or has already been used. Ask the person who invited you for a new one.",
              not_found: "This invitation link is not valid. Open the whole link from the mail again.",
              invalid_credentials:
                "You already have an account, and this is not its password. Enter your account's password.",
            }),
          );
        }
        return "You have joined the organization. You can now log in with your email and password.";
      }}
    />
  );
}

export function MissingToken({ what }: { what: string }) {
  return (
    <main>
      <h1>Link incomplete</h1>
      <p>This {what} link has lost its code. Open the whole link from the mail again.</p>
    </main>
  );
}
