import { unwrap } from "@evalp/client";
import { MissingToken } from "./accept-invitation.js";
import { api, errorWords, queryToken } from "./api.js";
import { PasswordForm } from "./password-form.js";

/** `/reset-password?token=…`, the link of a password-reset mail (POST /auth/password-reset/confirm). */
export function ResetPassword() {
  const token = queryToken();
  if (token === undefined) return <MissingToken what="password reset" />;
  return (
    <PasswordForm
      title="Choose a new password"
      intro="Enter the new password for your account. You will be logged out everywhere."
      label="New password"
      hint="At least 8 characters."
      submitLabel="Set the new password"
      submit={async (password) => {
        try {
          await unwrap(api().POST("/auth/password-reset/confirm", { body: { token, password } }));
        } catch (error) {
          throw new Error(
            errorWords(error, {
              reset_token_expired:
                "This reset link has expired or has already been used. Ask for a new password reset.",
              not_found: "This reset link is not valid. Open the whole link from the mail again.",
            }),
          );
        }
        return "Your password is set. Log in with your new password.";
      }}
    />
  );
}
