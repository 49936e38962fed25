/**
 * The fast way to open a long session: read the file from the end, follow the branch from the
 * leaf back to the latest compaction and on to its first kept entry, and stop. Only entries of
 * that branch are kept in memory; other lines are scanned for their id and dropped. The result
 * is the same context as `buildContext(readSession(file).entries)`.
 *
 * Past the boundary: the model and thinking level are the latest on the whole branch, so when
 * the part after the boundary does not set them, the walk goes on up the branch until it finds
 * them or reaches the root. That walk keeps nothing per line (memory stays bounded by the part
 * after the boundary), reads ids straight from the bytes when a line starts the way pi writes
 * entries, and parses only branch entries that can set what is still unknown.
 *
 * Checks: every branch line up to the boundary is parsed in full; other lines only as far as
 * their id, so a line elsewhere that is damaged after its id is not reported (readSession
 * reports every line). A parent that comes after its child in the file (pi's writer never does
 * this), a cycle, or an id reused by a later line is detected up to the boundary, and the
 * file is then read whole. Past the boundary a parent never met also makes it read the file
 * whole; an id reused there is followed to the nearest earlier line (pi takes the last one),
 * which can only change `model`/`thinkingLevel`, never the messages. Files older than version 3
 * are read whole and migrated.
 */
import { closeSync, fstatSync, openSync } from "node:fs";
import { SettingsScan, type SessionContext, assembleMessages, buildContext } from "./context.js";
import {
  cleanLine,
  headerVersion,
  incompleteTailReason,
  isBlankLine,
  parseEntryLine,
  readSession,
  unreadableFileError,
} from "./parse.js";
import { type ProgressReporter, progressReporter } from "./load-progress.js";
import { requireHeader } from "./header-read.js";
import { QuickIds } from "./quick-ids.js";
import { DEFAULT_CHUNK_SIZE, ReverseLineReader, lineNumbersAt } from "./reverse-line-reader.js";
import { corruptLineError, foundText, unknownEntryError } from "./transcript-error.js";
import {
  CURRENT_SESSION_VERSION,
  type CompactionEntry,
  type LoadProgress,
  type SessionEntry,
  type SessionHeader,
  type SkippedLine,
} from "./types.js";

export interface LoadBoundaryOptions {
  /** The leaf whose branch to load; default the last entry; `null`: before the first entry (empty). */
  leafId?: string | null;
  /** Leave out corrupt lines (each reported in `skipped`) instead of failing. */
  skipCorrupt?: boolean;
  /** Block size for reading, in bytes (default 1 MiB). Small values are for tests. */
  chunkSize?: number;
  /**
   * Called as the file is read, about once per MiB: `bytesRead` counts the header and the bytes
   * read backwards from the end, `totalBytes` is the file's size. A boundary load usually stops
   * far below `totalBytes` (it reads only back to the boundary); when it is done it reports
   * `bytesRead === totalBytes` once, so a progress bar ends full.
   */
  onProgress?: (progress: LoadProgress) => void;
}

export interface BoundaryLoad extends SessionContext {
  file: string;
  /** The header line as found. */
  header: SessionHeader;
  /** Session format version as found in the file. */
  version: number;
  /** Lines left out among those read, in file order. */
  skipped: SkippedLine[];
  /** The last line was a write cut short (no line break, not JSON); it is in `skipped`. */
  incompleteTail: boolean;
  /** Bytes read from the file. */
  bytesRead: number;
  /** True when the whole file was parsed (an older version, or parent links the fast path cannot follow). */
  fullRead: boolean;
}

/** Loads the context of a session file's branch by the boundary rule, reading as little as it can. Never writes. */
export function loadBoundary(path: string, options: LoadBoundaryOptions = {}): BoundaryLoad {
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    throw unreadableFileError(path, error);
  }
  try {
    const size = fstatSync(fd).size;
    const progress = progressReporter(size, options.onProgress);
    const { header, line: head, bytesRead: headBytes } = requireHeader(fd, path, size);
    const version = headerVersion(header);
    let loaded: BoundaryLoad;
    if (version < CURRENT_SESSION_VERSION) {
      loaded = loadWhole(path, options, headBytes + size, progress);
    } else {
      progress?.update(head.end);
      const onRead = progress === undefined ? undefined : (bytesRead: number) => progress.update(head.end + bytesRead);
      const walked = walkBranch(fd, path, head.end, size, options, chunkSize, onRead);
      loaded =
        "forwardLink" in walked
          ? loadWhole(path, options, headBytes + walked.bytesRead + size, progress)
          : { ...walked, file: path, header, version, bytesRead: headBytes + walked.bytesRead, fullRead: false };
    }
    progress?.done();
    return loaded;
  } finally {
    closeSync(fd);
  }
}

function loadWhole(path: string, options: LoadBoundaryOptions, bytesSoFar: number, progress: ProgressReporter | undefined): BoundaryLoad {
  const parsed = readSession(path, {
    ...(options.skipCorrupt === undefined ? {} : { skipCorrupt: options.skipCorrupt }),
    // Reported only past what the walk already reported, so the numbers never go back.
    ...(progress === undefined ? {} : { onProgress: (read: LoadProgress) => progress.update(read.bytesRead) }),
  });
  const context = buildContext(parsed.entries, { file: path, ...(options.leafId === undefined ? {} : { leafId: options.leafId }) });
  return {
    ...context,
    file: path,
    header: parsed.header,
    version: parsed.version,
    skipped: parsed.skipped,
    incompleteTail: parsed.incompleteTail,
    bytesRead: bytesSoFar,
    fullRead: true,
  };
}


/** Returned when parent links point forward in the file: the fast path cannot follow them. */
interface ForwardLink {
  forwardLink: true;
  bytesRead: number;
}

interface PendingSkip {
  start: number;
  text: string;
  reason: string;
}

type Walked = Omit<BoundaryLoad, "file" | "header" | "version" | "fullRead">;

function walkBranch(
  fd: number,
  path: string,
  regionStart: number,
  size: number,
  options: LoadBoundaryOptions,
  chunkSize: number,
  onRead: ((bytesRead: number) => void) | undefined,
): Walked | ForwardLink {
  const { leafId, skipCorrupt = false } = options;
  const empty = { messages: [], entryIds: [], compaction: null, model: null, thinkingLevel: "off", leafId: null, branch: [] };
  if (leafId === null) return { ...empty, skipped: [], incompleteTail: false, bytesRead: 0 };

  const reader = new ReverseLineReader(fd, regionStart, size, chunkSize, onRead);
  const version = CURRENT_SESSION_VERSION;
  const settings = new SettingsScan();
  /** Ids of the lines read so far (all later in the file than the current line). */
  const seen = new Set<string>();
  const collected: SessionEntry[] = []; // leaf first
  const pending: PendingSkip[] = [];
  let incompleteTail = false;
  let lastEntryId: string | undefined;
  /** The id of the next branch entry to find; undefined while looking for the default leaf. */
  let wanted: string | undefined = leafId;
  let phase: "leaf" | "keep" | "settings" = "leaf";
  let compaction: CompactionEntry | null = null;
  let keptFound = false;

  const quick = new QuickIds();
  let reachedRoot = false;
  for (let line = reader.next(); line !== undefined; line = reader.next()) {
    const quickMatch = line.terminated && quick.match(line.bytes);
    const anyEntry = phase === "leaf" && wanted === undefined;
    if (quickMatch && !anyEntry && !quick.idIs(wanted)) {
      // Not on the branch. Past the boundary nothing is remembered about such lines.
      if (phase !== "settings") {
        const id = quick.id();
        lastEntryId ??= id;
        seen.add(id);
      }
      continue;
    }
    let entry: SessionEntry | undefined;
    let id: string;
    let parentId: string | null;
    if (quickMatch && phase === "settings" && !settings.wants(quick.type())) {
      // On the branch past the boundary, but it cannot change a setting still unknown.
      id = wanted as string;
      parentId = quick.parentId();
    } else {
      const text = cleanLine(line.bytes.toString("utf8"), false);
      if (isBlankLine(text)) continue;
      const verdict = parseEntryLine(text, version);
      if (!verdict.ok) {
        if (!line.terminated && verdict.notJson) {
          incompleteTail = true;
          pending.push({ start: line.start, text: foundText(text), reason: incompleteTailReason(verdict.reason) });
        } else if (skipCorrupt) {
          pending.push({ start: line.start, text: foundText(text), reason: verdict.reason });
        } else {
          const { lines } = lineNumbersAt(fd, [line.start], chunkSize);
          throw corruptLineError(path, lines.get(line.start) ?? 0, text, verdict.reason);
        }
        continue;
      }
      entry = verdict.entry as unknown as SessionEntry;
      id = entry.id;
      parentId = entry.parentId ? entry.parentId : null;
      if (!anyEntry && id !== wanted) {
        if (phase !== "settings") {
          lastEntryId ??= id;
          seen.add(id);
        }
        continue;
      }
    }
    // On the branch.
    lastEntryId ??= id;
    if (phase !== "settings") seen.add(id);
    if (phase === "leaf") phase = "keep";
    if (entry !== undefined) settings.see(entry);
    if (phase === "keep" && entry !== undefined) {
      collected.push(entry);
      if (compaction === null) {
        if (entry.type === "compaction") compaction = entry;
      } else if (entry.id === compaction.firstKeptEntryId) {
        keptFound = true;
        phase = "settings";
      }
    }
    if (phase === "settings" && settings.complete) break;
    if (parentId === null) {
      reachedRoot = true;
      break;
    }
    // A parent later in the file than its child (or a cycle): pi's byId finds it, a backward walk cannot.
    if (parentId === id || seen.has(parentId)) return { forwardLink: true, bytesRead: reader.bytesRead };
    wanted = parentId;
  }
  // Past the boundary the walk keeps no ids, so a parent it never met may be a forward link: read whole.
  if (phase === "settings" && !settings.complete && !reachedRoot) return { forwardLink: true, bytesRead: reader.bytesRead };

  let bytesRead = reader.bytesRead;
  if (phase === "leaf" && leafId !== undefined) throw unknownEntryError(path, leafId, seen, lastEntryId);

  let branch = collected.reverse();
  if (compaction !== null && !keptFound) branch = branch.slice(branch.indexOf(compaction));
  const assembled = assembleMessages(branch);

  let skipped: SkippedLine[] = [];
  if (pending.length > 0) {
    const numbered = lineNumbersAt(fd, pending.map((p) => p.start), chunkSize);
    bytesRead += numbered.bytesRead;
    skipped = pending
      .map((p) => ({ line: numbered.lines.get(p.start) ?? 0, text: p.text, reason: p.reason }))
      .sort((a, b) => a.line - b.line);
  }
  return {
    ...assembled,
    ...settings.result(),
    leafId: branch[branch.length - 1]?.id ?? null,
    branch,
    skipped,
    incompleteTail,
    bytesRead,
  };
}
