export { type Deps as PlatformDeps, migrations, platformService, SCHEMA } from "./server.js";
