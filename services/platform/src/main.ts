import { runProcess } from "@evalp/kit";
import { createPlatform } from "./compose.js";

await runProcess("platform", createPlatform);
