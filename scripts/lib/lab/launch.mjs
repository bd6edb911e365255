// Starts a test process ahead of time: `node <node:test flags> launch.mjs <test file>`.
//
// `lab` spawns this while the compiler is still running, so node's own start-up overlaps
// the build. It waits for one line on stdin: `run` imports the compiled test file (node:test
// then runs it exactly as `node <file>` would, with the flags this process was given);
// anything else, or stdin closing, ends the process without running anything (the build
// failed or the run was cancelled).
//
// Plain JavaScript on purpose: it runs in a bare `node`, without tsx.
import { pathToFileURL } from "node:url";

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write("usage: node launch.mjs <compiled test file>\n");
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

if (command === "run") {
  await import(pathToFileURL(file).href);
}
