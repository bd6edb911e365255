// Starts a test process ahead of time: `node <node:test flags> test-launcher.mjs <test file> [<test file> …]`.
//
// `lab` spawns this while the compiler is still running, so node's own start-up overlaps
// the build. It waits for one line on stdin: `run` imports the compiled test file (node:test
// then runs it exactly as `node <file>` would, with the flags this process was given);
// anything else, or stdin closing, ends the process without running anything (the build
// failed or the run was cancelled). `run {"sampleBy": <Date.now() time>, "sampleFile": <path>}` first
// starts the watchdog (`watchdog.mjs`), which writes where the process is at the time `sampleBy`:
// what a run ended by its time limit then reports.
//
// Several files are imported one after another in the order given, into one node:test run: the
// author's fault runs put many faults' test copies in one process this way (node reports each
// test with the file that declares it).
//
// Plain JavaScript on purpose: it runs in a bare `node`, without tsx.
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write("usage: node test-launcher.mjs <compiled test file> [<compiled test file> …]\n");
  process.exit(2);
}

const command = await new Promise((resolve) => {
  let buffered = "";
  const finish = (value) => {
    process.stdin.off("data", onData);
    process.stdin.off("end", onEnd);
    process.stdin.pause();
    process.stdin.unref?.();
    resolve(value);
  };
  const onData = (chunk) => {
    buffered += chunk;
    const newline = buffered.indexOf("\n");
    if (newline !== -1) finish(buffered.slice(0, newline).trim());
  };
  const onEnd = () => finish("");
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", onData);
  process.stdin.on("end", onEnd);
});

const [verb, ...rest] = command.split(" ");
if (verb === "run") {
  const watch = rest.length > 0 ? JSON.parse(rest.join(" ")) : undefined;
  if (watch !== undefined) {
    const watchdog = new Worker(new URL("./watchdog.mjs", import.meta.url), { workerData: watch });
    // A watchdog that cannot start only means no sample: the run itself goes on.
    await new Promise((resolve) => {
      watchdog.once("message", resolve);
      watchdog.once("error", resolve);
      watchdog.once("exit", resolve);
    });
    watchdog.unref();
  }
  for (const file of files) await import(pathToFileURL(file).href);
}
