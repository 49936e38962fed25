/** The aligned console table the benchmarks print: a title, a header row, a rule, the rows. */
export function printTable(title: string, rows: readonly (readonly string[])[]): void {
  const widths = rows.reduce<number[]>((acc, row) => row.map((cell, i) => Math.max(acc[i] ?? 0, cell.length)), []);
  const line = (row: readonly string[]): string => `  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}`;
  console.log(`\n${title}`);
  console.log(line(rows[0] ?? []));
  console.log(`  ${widths.map((w) => "-".repeat(w)).join("  ")}`);
  for (const row of rows.slice(1)) console.log(line(row));
}
