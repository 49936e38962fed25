// @compaction/plugin-rolling: being written.
export {};
