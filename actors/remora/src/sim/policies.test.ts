import { describeSeedChunks } from "./seed-chunks.js"

describeSeedChunks("policies", "Theorem 1, Lemma 8, Lemma 4 and Theorem 3 hold")
