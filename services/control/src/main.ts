import { runProcess } from "@evalp/kit";
import { createControl } from "./compose.js";

await runProcess("control", createControl);
