/** The built-in presets the pi runtime tests run. */
export const PRESETS_FOR_RUNTIME = ["safeguard", "rolling", "layered", "sliding-window"] as const;
