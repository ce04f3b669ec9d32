export { type MessagingRoutesOptions, messagingRoutes } from "./routes.js";
