// fast-check as the property hunt sees it (vitest.hunt.config.ts aliases `fast-check` here): every
// `fc.assert` runs HUNT_FACTOR times its runs (default 10) from a new random seed, without the
// fixed seed a test may pin for CI, and stops at the first failure without shrinking it unless
// HUNT_SHRINK=1. HUNT_SEED and HUNT_PATH replay one failure as the report printed it.
import original from "fast-check-original";

export * from "fast-check-original";

const factor = Number(process.env.HUNT_FACTOR ?? 10);
if (!Number.isFinite(factor) || factor <= 0) throw new Error(`HUNT_FACTOR must be a positive number; found ${process.env.HUNT_FACTOR}.`);

/** The test's parameters for a hunt: more runs, a new seed, no shrinking. */
function huntParameters(parameters = {}) {
  const { seed: _pinned, path: _path, ...rest } = parameters;
  const hunt = { ...rest, numRuns: Math.max(1, Math.round((parameters.numRuns ?? 100) * factor)), endOnFailure: process.env.HUNT_SHRINK !== "1" };
  if (process.env.HUNT_SEED !== undefined) return { ...hunt, seed: Number(process.env.HUNT_SEED), path: process.env.HUNT_PATH };
  return hunt;
}

export function assert(property, parameters) {
  return original.assert(property, huntParameters(parameters));
}

const huntFastCheck = Object.create(original, { assert: { value: assert, enumerable: true } });
export default huntFastCheck;
