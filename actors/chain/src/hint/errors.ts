/** Why a hint was refused (core/hint-error.ts). */
export { HintError, type HintErrorReason } from "../core/hint-error.js"
