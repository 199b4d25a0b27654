/**
 * The link proxy as its own process (link-proxy.ts), so its timing is not at the mercy of the test's event
 * loop. Options come as one JSON argument (ProxyOptions); it prints `proxy ready <ports as JSON>`, then
 * answers one line per command read on stdin: `cut <host>`, `heal <host>`, `delay <ms> <jitter ms>` (each
 * answered `ok <command>`), `reset` (the stats) and `stats` (answered `stats <JSON>`). It exits when stdin closes.
 */
import { createInterface } from "node:readline"
import { type ProxyOptions, startLinkProxy } from "./link-proxy.js"

const options = JSON.parse(process.argv[2] ?? "") as ProxyOptions
const proxy = await startLinkProxy(options)
console.log(`proxy ready ${JSON.stringify(proxy.ports)}`)
const lines = createInterface({ input: process.stdin })
lines.on("line", (line) => {
  const [command, ...args] = line.trim().split(/\s+/)
  const number = (i: number) => Number(args[i])
  switch (command) {
    case "cut":
      proxy.cut(number(0))
      break
    case "heal":
      proxy.heal(number(0))
      break
    case "delay":
      proxy.setDelay(number(0), number(1))
      break
    case "reset":
      proxy.resetStats()
      break
    case "stats":
      console.log(`stats ${JSON.stringify(proxy.stats())}`)
      return
    default:
      console.log(`error unknown command ${JSON.stringify(line)}`)
      return
  }
  console.log(`ok ${line.trim()}`)
})
lines.on("close", () => {
  void proxy.close().then(() => process.exit(0))
})
