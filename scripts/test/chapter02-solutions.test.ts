/** Chapter 02's solutions stay green and keep the starter's surface (see `support/chapter-solutions.ts`). */
import { testChapterSolutions } from "./support/chapter-solutions.js";

testChapterSolutions("02", 2);
