// JavaScript units per the `typescript` npm package's parser: see typescript.cjs (same
// conventions; .js, .mjs, .cjs and .jsx files, parsed as JavaScript).
"use strict";

require("./typescript.cjs").main("javascript");
