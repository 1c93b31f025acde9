export type { Deps as ControlDeps } from "./deps.js";
export { controlService, migrations, SCHEMA } from "./server.js";
