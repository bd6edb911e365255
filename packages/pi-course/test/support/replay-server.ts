/**
 * A local HTTP server that plays recorded provider responses, so provider tests exercise the
 * real `fetch`, sockets and streaming without any network: it listens on 127.0.0.1 on a free
 * port, answers the requests it receives with the given steps in order, records each request,
 * and is closed (with every connection it holds) when the test ends.
 *
 * Bounded by construction: a step either ends its response, destroys its socket, or holds it
 * until the server closes at the end of the test; a request beyond the script gets an
 * immediate 500 naming the mistake, and `requests` shows how many there were.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One recorded response. */
export interface ReplayStep {
  /** Default 200. */
  status?: number;
  /** Default: `content-type: text/event-stream` for 2xx, `application/json` otherwise. */
  headers?: Record<string, string>;
  /** The body, written piece by piece (a string or bytes is one piece). */
  body?: string | Uint8Array | readonly (string | Uint8Array)[];
  /** After the body's pieces, destroy the connection instead of ending the response: a drop mid-stream. */
  drop?: boolean;
  /** After the body's pieces (if any), send nothing more and keep the connection open: a service that went silent. */
  stall?: boolean;
  /** Send nothing at all, not even the status line: a service that never answers. */
  hang?: boolean;
}

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ReplayServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Resolves once `count` requests have been received (at once if they have). */
  received(count: number): Promise<void>;
}

function pieces(body: ReplayStep["body"]): (string | Uint8Array)[] {
  if (body === undefined) return [];
  return typeof body === "string" || body instanceof Uint8Array ? [body] : [...body];
}

/** `body` cut into pieces of `size` bytes (a multi-byte character may be split: that is the point). */
export function inPieces(body: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(body);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

const write = (res: ServerResponse, piece: string | Uint8Array) => new Promise<void>((resolve) => res.write(piece, () => resolve()));

async function play(res: ServerResponse, step: ReplayStep): Promise<void> {
  if (step.hang) return;
  const status = step.status ?? 200;
  const type = status >= 200 && status < 300 ? "text/event-stream" : "application/json";
  res.writeHead(status, { "content-type": type, ...step.headers });
  res.flushHeaders();
  for (const piece of pieces(step.body)) {
    await write(res, piece);
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (step.drop) res.socket?.destroy();
  else if (!step.stall) res.end();
}

/** Starts a server playing `steps`; it is closed when `t` ends. */
export async function startReplayServer(t: { after(fn: () => Promise<void> | void): unknown }, steps: readonly ReplayStep[]): Promise<ReplayServer> {
  const queue = [...steps];
  const requests: RecordedRequest[] = [];
  const waiting: { count: number; resolve(): void }[] = [];
  const received = (count: number) =>
    new Promise<void>((resolve) => {
      if (requests.length >= count) resolve();
      else waiting.push({ count, resolve });
    });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      for (const waiter of waiting.filter((w) => requests.length >= w.count)) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
      const step = queue.shift();
      if (step === undefined) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { type: "replay_exhausted", message: `replay server: request ${requests.length} has no recorded response` } }));
        return;
      }
      void play(res, step);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, requests, received };
}

/**
 * A port on 127.0.0.1 where nothing listens: free when checked, and taken from below every
 * system's default ephemeral range (Linux 32768–60999, macOS and Windows 49152–65535). A port
 * the system just handed out (`listen(0)`) would not do: another test process's `listen(0)`
 * may be given it again, and a connection whose own source port happens to equal it connects
 * to itself, so "refused" would turn into an answer now and then on a busy machine.
 */
export async function closedPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (!free) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
  throw new Error("no free port between 20000 and 29999 on 127.0.0.1");
}
