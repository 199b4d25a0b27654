/**
 * Request/reply over one wildcard inbox per connection, like nats.js's MuxSubscription (a token per request
 * appended to the connection's inbox subject), with a callback per request. nats.js's `request` settles
 * every request through a promise and a timer promise and builds an Error with its stack trace for each one
 * (its `cancel` after a reply), which together cost more than the rest of an ask's sending side.
 */
import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/nats-core"
import { inboxPrefixOfConnection } from "./nats-security.js"

/** Why a request got no reply. */
export type RequestFailure =
  | { readonly _tag: "Timeout" }
  | { readonly _tag: "NoResponders" }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Failed"; readonly cause: unknown }

export type ReplyCallback = (failure: RequestFailure | undefined, reply: Msg | undefined) => void

interface Pending {
  readonly onReply: ReplyCallback
  readonly timer: ReturnType<typeof setTimeout>
}

const TIMEOUT: RequestFailure = { _tag: "Timeout" }
const NO_RESPONDERS: RequestFailure = { _tag: "NoResponders" }
const CLOSED: RequestFailure = { _tag: "Closed" }
const NO_RESPONDERS_STATUS = 503

export interface ReplyInbox {
  /**
   * Publishes `data` to `subject` with a reply subject of this inbox and calls `onReply` once: with the reply,
   * or with why there is none. Returns a function that forgets the request (no callback after it).
   */
  readonly request: (
    subject: string,
    data: Uint8Array,
    headers: MsgHdrs | undefined,
    timeoutMs: number,
    onReply: ReplyCallback
  ) => () => void
}

export const makeReplyInbox = (nc: NatsConnection): ReplyInbox => {
  const pending = new Map<string, Pending>()
  let prefix = ""
  let subscription: Subscription | undefined
  let next = 0

  const settle = (token: string, failure: RequestFailure | undefined, reply: Msg | undefined) => {
    const request = pending.get(token)
    if (request === undefined) return // timed out or forgotten before the reply came
    pending.delete(token)
    clearTimeout(request.timer)
    request.onReply(failure, reply)
  }

  const failAll = (failure: RequestFailure) => {
    for (const token of [...pending.keys()]) settle(token, failure, undefined)
  }

  const listen = () => {
    // Under the connection's own prefix: with credentials, the only inboxes this user may subscribe to.
    prefix = `${createInbox(inboxPrefixOfConnection(nc))}.`
    const sub = nc.subscribe(`${prefix}*`, {
      callback: (error, msg) => {
        if (error !== null) {
          failAll({ _tag: "Failed", cause: error })
          return
        }
        const token = msg.subject.slice(prefix.length)
        const noResponders = msg.data.length === 0 && msg.headers?.code === NO_RESPONDERS_STATUS
        settle(token, noResponders ? NO_RESPONDERS : undefined, noResponders ? undefined : msg)
      }
    })
    // The subscription ends with the connection (close or drain): nothing more can arrive.
    void sub.closed.then(
      () => failAll(CLOSED),
      () => failAll(CLOSED)
    )
    subscription = sub
  }

  return {
    request: (subject, data, headers, timeoutMs, onReply) => {
      const token = (next++).toString(36)
      const timer = setTimeout(() => settle(token, TIMEOUT, undefined), timeoutMs)
      pending.set(token, { onReply, timer })
      try {
        if (subscription === undefined || subscription.isClosed()) listen()
        nc.publish(
          subject,
          data,
          headers === undefined ? { reply: prefix + token } : { reply: prefix + token, headers }
        )
      } catch (cause) {
        settle(token, { _tag: "Failed", cause }, undefined)
      }
      return () => {
        const request = pending.get(token)
        if (request === undefined) return
        pending.delete(token)
        clearTimeout(request.timer)
      }
    }
  }
}
