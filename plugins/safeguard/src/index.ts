// @compaction/plugin-safeguard: being written.
export {};
