/** The OpenAI-compatible API server (surface layer); see `server.ts`. */
export { type ApiServer, ApiServerConfigError, type ApiServerOptions, startApiServer } from "./server.js";
