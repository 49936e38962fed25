/**
 * Published stage constants for tapable's `stage` option. Lower stages run first; taps of the
 * same stage run in the order they were applied (a user's own plugins are applied before the
 * preset's, so at the same stage they win a `selectCut`).
 */
export const STAGE_PREPARE = -200;
/** beforeCompact: pruning of tool outputs (layered layer 1). */
export const STAGE_PRUNE = -100;
/** The default stage for strategy taps. */
export const STAGE_STRATEGY = 0;
/** summarize: the base summary is written at STAGE_STRATEGY; additions (last turn, file lists) here. */
export const STAGE_AUGMENT = 100;
/** selectCut: a cut offered only when no strategy chose one. */
export const STAGE_FALLBACK = 1000;
/** afterCompact: persistence and indexing. */
export const STAGE_PERSIST = 100;
/** afterCompact: reporting and warnings, after persistence. */
export const STAGE_REPORT = 200;
