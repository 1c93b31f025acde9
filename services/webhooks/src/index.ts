export { type Deps as WebhooksDeps, migrations, SCHEMA, webhooksService } from "./server.js";
