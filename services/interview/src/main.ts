import { runProcess } from "@evalp/kit";
import { createInterview } from "./compose.js";

await runProcess("interview", createInterview);
