// @compaction/plugin-sliding-window: being written.
export {};
