/**
 * The engine thread's Linux name (`comm`, what `top -H` and `ps -L` show), so an operator or a benchmark can
 * tell its CPU apart from the host's threads in /proc/<pid>/task/<tid>. Node names a worker thread nothing of
 * its own, so without it every thread of a replica reads `node`.
 */
import { writeFileSync } from "node:fs"

/** At most 15 characters (the kernel's TASK_COMM_LEN). */
export const ENGINE_THREAD_NAME = "reef-engine"

/** Names the calling thread; a no-op where /proc/thread-self is not writable (not Linux). */
export const nameThisThread = (name: string): void => {
  try {
    writeFileSync("/proc/thread-self/comm", name)
  } catch {
    // Not Linux: the thread keeps its default name.
  }
}
