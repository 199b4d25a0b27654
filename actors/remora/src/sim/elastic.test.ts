import { describeSeedChunks } from "./seed-chunks.js"

describeSeedChunks("elastic", "(§4.7) Theorem 1, Lemma 8, Lemma 4, liveness; no work to a retired worker")
