/**
 * src/pi-types.ts against pi's own types (compiled by src/pi-types.test.ts when pi is installed):
 * every value pi hands the extension must fit the local declaration, and the extension's factory
 * must fit pi's `ExtensionFactory`, for today's pi (0.87) and pi 0.73.
 */
import type * as Pi087 from "@earendil-works/pi-coding-agent";
import type * as Pi073 from "@mariozechner/pi-coding-agent";
import type * as Local from "../src/pi-types.js";
import { compactionExtension } from "../src/extension.js";

type Fits<Actual, Declared> = [Actual] extends [Declared] ? true : never;
const checks: Array<true> = [];

checks.push(true as Fits<Pi087.ExtensionContext, Local.ExtensionContext>);
checks.push(true as Fits<Pi087.ExtensionAPI, Local.ExtensionAPI>);
checks.push(true as Fits<Pi087.SessionBeforeCompactEvent, Local.SessionBeforeCompactEvent>);
checks.push(true as Fits<Pi087.ContextEvent, Local.ContextEvent>);
checks.push(true as Fits<Local.CompactionResult, Pi087.CompactionResult>);
checks.push(true as Fits<Pi087.ToolDefinition, Local.ToolDefinition>);

checks.push(true as Fits<Pi073.ExtensionContext, Local.ExtensionContext>);
checks.push(true as Fits<Pi073.ExtensionAPI, Local.ExtensionAPI>);
checks.push(true as Fits<Pi073.SessionBeforeCompactEvent, Local.SessionBeforeCompactEvent>);
checks.push(true as Fits<Pi073.ContextEvent, Local.ContextEvent>);
checks.push(true as Fits<Local.CompactionResult, Pi073.CompactionResult>);

export const factory087: Pi087.ExtensionFactory = compactionExtension();
export const factory073: Pi073.ExtensionFactory = compactionExtension();
export { checks };
