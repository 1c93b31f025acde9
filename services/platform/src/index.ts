export { type Deps as PlatformDeps, migrations, SCHEMA, platformService } from "./server.js";
