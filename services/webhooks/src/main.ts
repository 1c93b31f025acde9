import { runProcess } from "@evalp/kit";
import { createWebhooks } from "./compose.js";

await runProcess("webhooks", createWebhooks);
