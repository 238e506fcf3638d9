import { version } from "../package.json";

/** The engine's version, as its package says: recorded in every run header. */
export const ENGINE_VERSION: string = version;
