import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { AcceptInvitation } from "./accept-invitation.js";
import { ConsolePage } from "./console.js";
import { InterviewPage } from "./interview.js";
import { ResetPassword } from "./reset-password.js";
import "./style.css";

/** The page a path shows; the gateway answers index.html for each of these paths. */
function Page({ path }: { path: string }) {
  switch (path.replace(/\/+$/, "")) {
    case "/accept-invitation":
      return <AcceptInvitation />;
    case "/reset-password":
      return <ResetPassword />;
    case "/interview":
      return <InterviewPage />;
    case "/console":
      return <ConsolePage />;
    default:
      return (
        <main>
          <h1>Page not found</h1>
          <p>This address shows no page. Check the link you followed.</p>
        </main>
      );
  }
}

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <Page path={location.pathname} />
    </StrictMode>,
  );
}
