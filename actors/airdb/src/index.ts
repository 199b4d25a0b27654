export * from "./segment/index.js"
