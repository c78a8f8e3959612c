import type {
  Diagnostic,
  EditResponse,
  GrepFile,
  GrepSummary,
  ReadResponse,
  WriteResponse,
} from "./gen/hashline/v1/hashline_pb.js";

/**
 * The format functions render responses as the text a model reads, byte for
 * byte what the Go client's Format functions and the hashline CLI print
 * (internal/render in the repository makes theirs). The tests check both
 * against the same golden files, internal/render/testdata/*.txtar.
 */

/** A line with a number and a hash: Line or GrepLine. */
export interface TaggedLine {
  number: number;
  hash: string;
  content: string;
}

/** Formats one line as "LINE:HASH|CONTENT". */
export function formatTag(line: TaggedLine): string {
  return `${line.number}:${line.hash}|${line.content}`;
}

/** Formats lines as "LINE:HASH|CONTENT" joined by "\n". */
export function formatTagged(lines: readonly TaggedLine[]): string {
  return lines.map(formatTag).join("\n");
}

/** Returns the reference "LINE:HASH" of a tagged line, for an edit. */
export function ref(line: TaggedLine): string {
  return `${line.number}:${line.hash}`;
}

/** "1 line", "2 lines", "2 matches". */
export function plural(n: number, what: string): string {
  if (n === 1) {
    return `1 ${what}`;
  }
  return what.endsWith("ch") ? `${n} ${what}es` : `${n} ${what}s`;
}

/**
 * Renders a Read page: "File: PATH (N lines, version V)", a note when the
 * page stops early naming the offset to continue from, then the tagged
 * lines.
 */
export function formatRead(r: ReadResponse): string {
  let out = `File: ${r.path} (${plural(r.totalLines, "line")}, version ${r.version})`;
  if (r.truncated && r.text !== "") {
    const [first, last] = pageBounds(r);
    out += ` [showing lines ${first}-${last}; ${r.totalLines - last} more below, continue with offset ${r.nextOffset}]`;
  }
  out += "\n";
  if (r.text !== "") {
    out += r.text + "\n";
  }
  return out;
}

/**
 * Returns the first and last line numbers of a non-empty read page: from
 * its lines or, for a read with omitLines, from its text, whose lines are
 * consecutive and each start with "LINE:".
 */
export function pageBounds(r: ReadResponse): [first: number, last: number] {
  if (r.lines.length > 0) {
    return [r.lines[0].number, r.lines[r.lines.length - 1].number];
  }
  const colon = r.text.indexOf(":");
  const head = colon < 0 ? r.text : r.text.slice(0, colon);
  const first = /^[+-]?\d+$/.test(head) ? Number(head) : 0;
  return [first, first + (r.text.match(/\n/g)?.length ?? 0)];
}

/**
 * Renders an applied (or dry-run) edit: a header with the new version and
 * how the other lines' numbers changed (formatShifts), the rebase report,
 * warnings, then the tagged diff: the changes with the fresh LINE:HASH of
 * every line shown (" " unchanged, "+" added; "-" removed lines have none),
 * the refs to use next. The unified diff follows when diff is set. A
 * response without a tagged diff (a server older than the field) shows its
 * windows of fresh lines instead.
 */
export function formatEdit(r: EditResponse, diff = false): string {
  const verb = r.dryRun ? "Dry run, nothing written:" : "Updated";
  let out = `${verb} ${r.path} (${plural(r.totalLines, "line")}, version ${r.version}).`;
  if (r.taggedDiff !== "") {
    out += " " + formatShifts(r);
  }
  out += "\n";
  if (r.rebasedFrom !== "") {
    out += `Rebased from version ${r.rebasedFrom}`;
    if (r.moved.length > 0) {
      out += "; moved: " + r.moved.map((m) => `${m.ref} -> line ${m.to}`).join(", ");
    }
    out += "\n";
  }
  for (const w of r.warnings) {
    out += `warning: ${w}\n`;
  }
  if (r.lines.length > 0) {
    out += formatTagged(r.lines) + "\n";
  } else if (r.taggedDiff !== "") {
    out += r.taggedDiff + "\n";
  } else {
    r.windows.forEach((w, i) => {
      if (i > 0) {
        out += "...\n";
      }
      if (w.text !== "") {
        out += w.text + "\n";
      }
    });
  }
  const syntax = formatSyntax("edit", r.dryRun, r.diagnostics, r.syntaxNotChecked);
  if (syntax !== "") {
    out += syntax + "\n";
  }
  if (diff && r.diff !== "") {
    out += r.diff.endsWith("\n") ? r.diff : r.diff + "\n";
  }
  return out;
}

/**
 * Says in one line what the syntax check of an edit or write (what) found:
 * the errors it introduced, each with its line tagged (its fresh ref in the
 * new file), or why the file was not checked; "" when it introduced none.
 * dryRun says the change was not written. The findings of the operator's
 * check commands (source "check") follow on a line of their own.
 */
export function formatSyntax(what: string, dryRun: boolean, diagnostics: readonly Diagnostic[], notChecked: string): string {
  const syn = diagnostics.filter((d) => d.source !== "check");
  const chk = diagnostics.filter((d) => d.source === "check");
  const verb = dryRun ? "would introduce" : "introduced";
  const lines: string[] = [];
  if (syn.length > 0) {
    lines.push(`Syntax: this ${what} ${verb} ${plural(syn.length, "error")} (${syn[0].checker}): ${diagnosticParts(syn)}`);
  } else if (notChecked !== "") {
    lines.push(`Syntax: not checked (${notChecked})`);
  }
  if (chk.length > 0) {
    const names = [...new Set(chk.map((d) => d.checker))];
    lines.push(`Checks: this ${what} ${verb} ${plural(chk.length, "finding")} (${names.join(", ")}): ${diagnosticParts(chk)}`);
  }
  return lines.join("\n");
}

/** The diagnostics as "REF|CONTENT — MESSAGE" (the message alone without a line), joined by "; ". */
function diagnosticParts(ds: readonly Diagnostic[]): string {
  return ds.map((d) => (d.ref === "" ? d.message : `${d.ref}|${d.content} — ${d.message}`)).join("; ");
}

/**
 * Says in a sentence how an edit moved the lines it did not touch
 * (EditResponse.shifts), in the numbers of the file before the edit:
 * "Line numbers unchanged.", "Lines after 12 moved down 2.", "Lines 13-39
 * moved down 2; lines after 40 kept their numbers." After a rebase it ends
 * "by this edit.": the caller's refs come from an older version.
 */
export function formatShifts(r: EditResponse): string {
  let s = "Line numbers unchanged.";
  if (r.shifts.length > 0) {
    const phrases = r.shifts.map(({ from, to, by }) => {
      // The last run of the file is said as "after".
      let subject = `lines ${from}-${to}`;
      let one = false;
      if (to + by === r.totalLines && from <= 1) {
        subject = "all lines";
      } else if (to + by === r.totalLines) {
        subject = `lines after ${from - 1}`;
      } else if (from === to) {
        subject = `line ${from}`;
        one = true;
      }
      if (by > 0) {
        return `${subject} moved down ${by}`;
      }
      if (by < 0) {
        return `${subject} moved up ${-by}`;
      }
      return one ? `${subject} kept its number` : `${subject} kept their numbers`;
    });
    const joined = phrases.join("; ");
    s = joined[0].toUpperCase() + joined.slice(1) + ".";
  }
  if (r.rebasedFrom !== "") {
    s = s.slice(0, -1) + " by this edit.";
  }
  return s;
}

/** Renders a Write response in one line, and a second for its syntax check when that found something. */
export function formatWrite(r: WriteResponse): string {
  const verb = r.created ? "Created" : "Wrote";
  return `${verb} ${r.path} (${plural(r.totalLines, "line")}, version ${r.version})\n` + syntaxLine("write", false, r);
}

/** The lines after a write's header, each with its newline: its warnings, then its syntax check's and checks' lines; "" for none. */
export function syntaxLine(what: string, dryRun: boolean, r: WriteResponse): string {
  const warnings = r.warnings.map((w) => `warning: ${w}\n`).join("");
  const s = formatSyntax(what, dryRun, r.diagnostics, r.syntaxNotChecked);
  return warnings + (s === "" ? "" : s + "\n");
}

/**
 * Renders one file of a Grep stream like the published hashline grep
 * format: ">>" before a matching line, two spaces before a context line,
 * "--" between runs that are not adjacent, under "File: PATH (version V)".
 */
export function formatGrepFile(f: GrepFile): string {
  let out = `File: ${f.path} (version ${f.version})\n`;
  let prev = 0;
  f.lines.forEach((l, i) => {
    if (i > 0 && l.number !== prev + 1) {
      out += "--\n";
    }
    prev = l.number;
    out += (l.match ? ">>" : "  ") + formatTag(l) + "\n";
  });
  return out;
}

/** Renders the end of a Grep stream in one line. */
export function formatGrepSummary(s: GrepSummary): string {
  if (s.matches === 0) {
    return `No matches found (${plural(s.filesScanned, "file")} searched).\n`;
  }
  let line = `${plural(s.matches, "match")} in ${plural(s.filesMatched, "file")} (${plural(s.filesScanned, "file")} searched)`;
  if (s.truncated) {
    line += "; stopped at the match limit: there may be more, narrow the pattern or path, or raise the limit";
  }
  return line + ".\n";
}
