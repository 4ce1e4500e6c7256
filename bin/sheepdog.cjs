#!/usr/bin/env node
"use strict";
// The statusline runs on every update of every agent on the host, and the hooks in the turn's
// path: their bundles start at once, without the dispatcher. Every other command (and any
// --help) goes through dist/cli.cjs, which loads that command's own file.
const command = process.argv[2];
const help = process.argv.includes("--help") || process.argv.includes("-h");
if (command === "statusline" && !help) require("../dist/hot/statusline.cjs");
else if (command === "hook" && !help) require("../dist/hot/hook.cjs");
else require("../dist/cli.cjs");
