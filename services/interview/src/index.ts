export { type Deps as InterviewDeps, migrations, SCHEMA, interviewService } from "./server.js";
