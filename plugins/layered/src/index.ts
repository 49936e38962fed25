// @compaction/plugin-layered: being written.
export {};
