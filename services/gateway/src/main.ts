import { runProcess } from "@evalp/kit";
import { createGateway } from "./compose.js";

await runProcess("gateway", createGateway);
