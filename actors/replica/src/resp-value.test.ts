import { describe, expect, it } from "vitest"
import { array, error, int, map, NULL, respBytes, simple, text } from "./resp-value.js"

describe("RESP encoding", () => {
  it("writes RESP2 as Redis does: null bulk, maps as flat arrays", () => {
    expect(respBytes(array([text("a"), NULL, int(-3), simple("OK")])).toString()).toBe(
      "*4\r\n$1\r\na\r\n$-1\r\n:-3\r\n+OK\r\n"
    )
    expect(respBytes(map([[text("proto"), int(2)]])).toString()).toBe("*2\r\n$5\r\nproto\r\n:2\r\n")
  })

  it("writes RESP3's own null and map", () => {
    expect(respBytes(NULL, 3).toString()).toBe("_\r\n")
    expect(respBytes(map([[text("proto"), int(3)]]), 3).toString()).toBe("%1\r\n$5\r\nproto\r\n:3\r\n")
  })

  it("never puts a line break inside an error", () => {
    expect(respBytes(error("ERR", "two\r\nlines")).toString()).toBe("-ERR two lines\r\n")
  })
})
