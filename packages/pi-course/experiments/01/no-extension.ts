/**
 * Chapter 01 · an experiment of Lab 1.5 (chapters/01-async/README.md §7): a relative import without
 * the `.js` of the file Node will load. The type checker refuses it, on purpose. Not part of
 * the build.
 */
import { isPlainObject } from "../../src/async";

export const isJsonObject = (value: unknown): boolean => isPlainObject(value);
