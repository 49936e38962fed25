// @compaction/plugin-last-turn-injection: being written.
export {};
