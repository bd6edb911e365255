/**
 * Terminal helpers shared by the course commands: colour only when it helps (a TTY and
 * no `NO_COLOR`), a screen clear for watch loops, and a display width that counts CJK
 * characters as two columns so that tables with Chinese titles line up.
 */

/** The part of a stream this module looks at (`process.stdout` fits). */
export interface TermStream {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

/**
 * True when output to `stream` may carry ANSI colour: the stream is a TTY and the
 * `NO_COLOR` variable is unset or empty (https://no-color.org). `FORCE_COLOR` is not
 * honoured on purpose: piped output (tests, `--json`, CI logs) stays plain.
 */
export function colorEnabled(stream: TermStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return stream.isTTY === true;
}

export interface Paint {
  readonly enabled: boolean;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

/** Colour functions that wrap text in ANSI codes when `enabled`, and return it unchanged otherwise. */
export function createPaint(enabled: boolean): Paint {
  const wrap = (open: number, close: number) => (text: string) => (enabled && text !== "" ? `\u001b[${open}m${text}\u001b[${close}m` : text);
  return {
    enabled,
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
    dim: wrap(2, 22),
    bold: wrap(1, 22),
  };
}

/** Colours for `stream`, following `colorEnabled`. */
export function paintFor(stream: TermStream, env: NodeJS.ProcessEnv = process.env): Paint {
  return createPaint(colorEnabled(stream, env));
}

/** Clears the screen and the scrollback of a TTY; does nothing on a pipe or file. */
export function clearScreen(stream: TermStream): void {
  if (stream.isTTY === true) stream.write("\u001b[2J\u001b[3J\u001b[H");
}

// Ranges of characters a terminal draws two columns wide (CJK, fullwidth forms, emoji).
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

const ANSI = /\u001b\[[0-9;]*m/g;

/** Columns `text` takes in a terminal: ANSI codes count 0, wide (CJK) characters 2, others 1. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text.replace(ANSI, "")) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || (code >= 0x300 && code <= 0x36f)) continue; // controls, combining marks
    width += WIDE.some(([from, to]) => code >= from && code <= to) ? 2 : 1;
  }
  return width;
}

/** `text` padded with spaces on the right to `width` display columns (never truncated). */
export function padEnd(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - displayWidth(text)));
}

/** `text` cut to at most `width` display columns, ending in `…` when it was cut. */
export function truncate(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  let out = "";
  for (const char of text) {
    if (displayWidth(out + char) > width - 1) break;
    out += char;
  }
  return `${out}…`;
}
