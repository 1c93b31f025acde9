export { type Deps as InterviewDeps, interviewService, migrations, SCHEMA } from "./server.js";
