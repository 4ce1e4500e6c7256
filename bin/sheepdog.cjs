#!/usr/bin/env node
"use strict";
// The statusline runs on every update of every agent on the host: its CommonJS bundle starts
// without Node's ESM loader. Every other command goes through the ESM CLI.
const help = process.argv.includes("--help") || process.argv.includes("-h");
if (process.argv[2] === "statusline" && !help) require("../dist/hot/statusline.cjs");
else import("../dist/cli.js");
