/**
 * Whole numbers with thousands separators, as the messages, markers and CLI of every package
 * write them.
 */

/**
 * `1234567.4` -> `1,234,567`: rounded to a whole number, what `toLocaleString("en-US")` writes,
 * without starting ICU's number formatting (its first use in a process takes about 20 ms, a tenth
 * of what a `compaction` command that counts nothing takes). Numbers beyond the safe integers,
 * infinities and NaN are left to `toLocaleString`.
 */
export function formatCount(n: number): string {
  const whole = Math.round(n);
  if (!Number.isSafeInteger(whole)) return whole.toLocaleString("en-US");
  const sign = whole < 0 || Object.is(whole, -0) ? "-" : "";
  const digits = String(Math.abs(whole));
  let grouped = digits.slice(0, digits.length % 3 || 3);
  for (let at = grouped.length; at < digits.length; at += 3) grouped += `,${digits.slice(at, at + 3)}`;
  return sign + grouped;
}
