import { StatefulTask, StatelessTask, YcsbRmw } from "@reef/proto"
import { describe, expect, it } from "vitest"
import type { StatefulTaskData, StatelessTaskData } from "../core/coordinator.js"
import { admitted, bodyOf, signed } from "../test/fixtures.js"
import { statefulTaskCodec, statefulToWire, statelessTaskCodec, statelessToWire } from "./wire.js"

const tx = admitted(
  signed(
    bodyOf(
      "t1",
      ["ycsb/a"],
      ["ycsb/a", "ycsb/b"],
      "ycsb.rmw",
      YcsbRmw.encode({ field: 2, data: Buffer.from("x") }).finish()
    )
  )
)

const stateful = (over: Partial<StatefulTaskData<typeof tx.payload>> = {}): StatefulTaskData<typeof tx.payload> => ({
  seq: 70_000,
  tx,
  versions: [3, 2 ** 33],
  sources: ["w2", "#genesis"],
  tokenSource: "w5",
  tokenPushed: true,
  combined: false,
  watermark: 69_000,
  height: 12,
  epoch: 3,
  generation: 2,
  ...over
})

describe("direct task codecs (the dispatch path)", () => {
  it("write exactly the bytes of the generated encoder over the wire objects", () => {
    for (const t of [
      stateful(),
      stateful({ seq: 1, tokenSource: "", tokenPushed: false, combined: true, height: 0 })
    ]) {
      for (const [trace, incarnation] of [
        ["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "9f2c"],
        ["", ""]
      ] as const) {
        const direct = statefulTaskCodec(trace, incarnation).encode(t).finish()
        expect(Buffer.from(direct).toString("hex")).toBe(
          Buffer.from(StatefulTask.encode(statefulToWire(t, trace, incarnation)).finish()).toString("hex")
        )
        expect(statefulTaskCodec(trace, incarnation).decode(direct)).toMatchObject({
          seq: t.seq,
          versions: t.versions,
          tokenPushed: t.tokenPushed,
          incarnation
        })
      }
    }
    for (const t of [
      { tx, proposal: 9, pushTo: "w3" },
      { tx, proposal: 0, pushTo: "" }
    ] satisfies Array<StatelessTaskData<typeof tx.payload>>) {
      const direct = statelessTaskCodec.encode(t).finish()
      expect(Buffer.from(direct).toString("hex")).toBe(
        Buffer.from(StatelessTask.encode(statelessToWire(t)).finish()).toString("hex")
      )
      expect(statelessTaskCodec.decode(direct)).toMatchObject({ proposal: t.proposal, pushTo: t.pushTo })
    }
  })
})
