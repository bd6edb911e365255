/**
 * CPU seconds this process and its reaped children have used so far (user + system), read
 * from `/proc/self/stat` on Linux; undefined elsewhere. On a machine other work shares, CPU
 * seconds move far less than wall-clock seconds: what a step costs, not how long it waited.
 */
import { readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

export function cpuSeconds(): number | undefined {
  try {
    // After the command name (in parentheses, which may hold spaces): state is field 3, utime 14, stime 15, cutime 16, cstime 17.
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
