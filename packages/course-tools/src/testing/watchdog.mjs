// A watchdog thread inside a lab's test process: just before the run's time limit, it
// pauses the main thread through the inspector and writes down where it was: the test that
// was running and the call frames, top first. A `for (;;) {}` in the learner's code leaves
// the main thread no moment to report anything itself, but the inspector interrupts it.
//
// Started by `test-launcher.mjs` with `workerData = { sampleBy, sampleFile, triggerFile }`: it looks
// at the moment `sampleBy` (a `Date.now()` time the lab runner fixed when the run started, so
// that a slow start of this process or this thread on a loaded machine cannot push the look past
// the run's time limit), or as soon as `triggerFile` exists (when given: the lab runner writes
// it when a run stops making progress), and writes the JSON to `sampleFile`. It posts "ready" once
// connected; the launcher imports the test file only then.
//
// The debugger is enabled only when it is time to look: enabled, it hears of every script the
// process loads and slows the run (about 30 ms of CPU for even a two-test file, more for a
// chapter's), which a run that ends in time never needs. Enabling it then still gives every
// script's URL (the inspector reports the scripts already loaded on enable), and, like the
// pause itself, it reaches a main thread that is busy computing.
//
// The file holds `{ test: string[] | null, frames: { functionName, url, line, column }[] }`
// (line and column 0-based, as the inspector gives them; the lab runner maps them to the
// TypeScript sources). Nothing is written when the main thread is idle (a test waiting for a
// promise that never settles): then there is no JavaScript to pause, and the lab runner
// names the test from the reporter's own record of which test had started.
//
// Plain JavaScript on purpose: it runs in a bare `node`, without tsx.
import { existsSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { parentPort, workerData } from "node:worker_threads";

const { sampleBy, sampleFile, triggerFile } = workerData;
const session = new Session();
session.connectToMainThread();

// Call frames carry a script id; its URL comes from the script's `scriptParsed` event.
const urls = new Map();
session.on("Debugger.scriptParsed", (message) => urls.set(message.params.scriptId, message.params.url));

const post = (method, params = {}) => new Promise((resolve) => session.post(method, params, (error, result) => resolve(error ? undefined : result)));

/** The name path of the node:test test whose code a paused frame belongs to, from its `this`. */
async function testPathAt(frames) {
  const expression =
    "(() => { let t = this; if (!t || typeof t !== 'object' || typeof t.name !== 'string' || !('parent' in t)) return null;" +
    " const path = []; while (t && t.parent) { path.unshift(t.name); t = t.parent; } return JSON.stringify(path); })()";
  for (const frame of frames) {
    const evaluated = await post("Debugger.evaluateOnCallFrame", { callFrameId: frame.callFrameId, expression, silent: true, returnByValue: true });
    const value = evaluated?.result?.value;
    if (typeof value === "string") return JSON.parse(value);
  }
  return null;
}

session.on("Debugger.paused", async (message) => {
  const frames = message.params.callFrames;
  const sample = {
    test: await testPathAt(frames),
    frames: frames.slice(0, 20).map((frame) => ({
      functionName: frame.functionName,
      url: urls.get(frame.location.scriptId) ?? frame.url ?? "",
      line: frame.location.lineNumber,
      column: frame.location.columnNumber,
    })),
  };
  try {
    writeFileSync(sampleFile, JSON.stringify(sample));
  } finally {
    // The worker stays: ending it (or its session) while the main thread computes can abort
    // the whole process. Unref'd by the launcher, it never keeps the process alive.
    session.post("Debugger.resume");
  }
});

// A pending inspector reply does not keep a worker alive: this timer does, for the life of the
// process (it also looks for the trigger). The launcher unrefs the worker, so an ordinary
// run ends without waiting for it.
let paused = false;
const pause = async () => {
  if (paused) return;
  paused = true;
  await post("Debugger.enable");
  session.post("Debugger.pause");
};
setInterval(() => {
  if (typeof triggerFile === "string" && existsSync(triggerFile)) void pause();
}, 100);
if (typeof sampleBy === "number") setTimeout(() => void pause(), Math.max(0, sampleBy - Date.now()));
parentPort.postMessage("ready");
